export async function listUsers() {
  return [];
}
