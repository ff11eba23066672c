import { logger } from "./logger";

export function greet(name: string): string {
  console.log("greeting", name);
  return `Helo, ${name}!`;
}
