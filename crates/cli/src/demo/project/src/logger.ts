export const logger = {
  info: (...args: unknown[]): void => {
    process.stdout.write(args.join(" ") + "\n");
  },
};
