// The `cliPath` given to pi 0.73.1's RpcClient, which always starts `node <cliPath> --mode rpc …`:
// runs the command in PI_RPC_CLIENT_COMMAND (a JSON array: the program, then arguments to put
// first) with the client's arguments, on the client's own stdin / stdout / stderr. A signal the
// client sends (RpcClient.stop sends SIGTERM) is passed on; the shim exits as the program did.
import { spawn } from "node:child_process";
import { constants } from "node:os";

const [program, ...leading] = JSON.parse(process.env.PI_RPC_CLIENT_COMMAND ?? "[]");
if (!program) {
    process.stderr.write("pi-shim.mjs: PI_RPC_CLIENT_COMMAND names no program\n");
    process.exit(2);
}
const child = spawn(program, [...leading, ...process.argv.slice(2)], { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
    process.stderr.write(`pi-shim.mjs: cannot run ${program}: ${error.message}\n`);
    process.exit(127);
});
child.on("exit", (code, signal) => {
    process.exit(signal ? 128 + (constants.signals[signal] ?? 0) : (code ?? 1));
});
