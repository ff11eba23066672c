import { logger } from "./logger";

export function add(a: number, b: number): number {
  console.log("add", a, b);
  return a + b;
}

export function total(values: number[]): number {
  return values.reduce((sum, v) => add(sum, v), 0);
}
