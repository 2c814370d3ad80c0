export const a = 1; // PI-READ-TARGET
