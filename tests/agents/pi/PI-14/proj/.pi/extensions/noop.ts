export default function (_pi: unknown) {}
