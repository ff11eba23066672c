// Drives `pi --mode rpc` with pi 0.73.1's own RpcClient (from the npm package in PI_073_PACKAGE)
// through every method of the client, in the order crates/cli/tests/rpc_client.rs scripts the mock
// model's replies, and prints one JSON line: the client's method names, and per step what the
// method returned or threw and the raw responses of the commands it sent. The Rust test asserts
// on them; this script only drives (it fails by itself only when the client cannot be loaded).
//
//   PI_073_PACKAGE=<package dir> PI_RPC_CLIENT_COMMAND='["<pi>"]' node drive.mjs
//
// RpcClient runs `node <cliPath> --mode rpc --provider mock --model mock-model`; cliPath is
// pi-shim.mjs beside this file, which runs PI_RPC_CLIENT_COMMAND with those arguments. The client
// runs in this script's directory of work (the test's project directory).
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const clientPath = join(process.env.PI_073_PACKAGE ?? "", "dist/modes/rpc/rpc-client.js");
const { RpcClient } = await import(pathToFileURL(clientPath).href);

/** How long any one wait may take: a guard against a hung run, not a timing assertion. */
const PATIENCE = 20000;

/** The client, keeping the raw response of every command it sends. */
class RecordingClient extends RpcClient {
    exchanges = [];
    async send(command) {
        const response = await super.send(command);
        this.exchanges.push({ command: command.type, response });
        return response;
    }
}

const client = new RecordingClient({
    cliPath: join(here, "pi-shim.mjs"),
    cwd: process.cwd(),
    provider: "mock",
    model: "mock-model",
});

// Every event, from one listener that stays subscribed. Waiting for an event goes through it and
// not through more `onEvent` listeners: RpcClient calls its listeners while iterating over the
// array they remove themselves from, so a listener that unsubscribes makes the next one miss
// that event (waitForIdle and collectEvents both do; at most one of them is pending at a time).
const events = [];
const waiters = [];
function listen(event) {
    events.push(event);
    for (const waiter of [...waiters]) {
        if (waiter.matches(event)) {
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(event);
        }
    }
}

/** The next event that `matches` (from now on). */
function nextEvent(what, matches) {
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            waiters.splice(waiters.indexOf(waiter), 1);
            reject(new Error(`no ${what} event`));
        }, PATIENCE);
        const waiter = {
            matches,
            resolve: (event) => {
                clearTimeout(timer);
                resolve(event);
            },
        };
        waiters.push(waiter);
    });
}

/**
 * `promise`, marked as handled: a step that fails half-way leaves promises nobody awaits (a
 * `waitForIdle` whose prompt was refused), and an unhandled rejection would end this script.
 */
function handled(promise) {
    promise.catch(() => {});
    return promise;
}

/**
 * Awaits `call`, a method that does not check its response (prompt, steer, …), and throws the
 * error of the one command it sent if that failed, so the step fails at once.
 */
async function accepted(call) {
    const first = client.exchanges.length;
    await call();
    const response = client.exchanges[first]?.response;
    if (!response?.success) {
        throw new Error(`${response?.command} refused: ${response?.error}`);
    }
}

const isTextDelta = (e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta";

/** Event types, without the stream of `message_update`s. */
const kinds = (list) => list.map((e) => e.type).filter((type) => type !== "message_update");

const steps = [];

/**
 * Runs one step, named after the client method it exercises: records what `run` returned (no
 * `value` key for `undefined`) or the message it threw, and the raw responses of its commands.
 */
async function step(name, run) {
    const first = client.exchanges.length;
    const firstEvent = events.length;
    const record = { step: name };
    try {
        const value = await run();
        record.ok = true;
        if (value !== undefined) {
            record.value = value;
        }
    } catch (error) {
        record.ok = false;
        record.error = error instanceof Error ? error.message : String(error);
    }
    record.exchanges = client.exchanges.slice(first);
    record.events = kinds(events.slice(firstEvent));
    steps.push(record);
    return record.value;
}

await step("onEvent", () => {
    client.onEvent(listen);
});
await step("start", () => client.start());
await step("getState: fresh", () => client.getState());
await step("getCommands", () => client.getCommands());
await step("getAvailableModels", () => client.getAvailableModels());

// A prompt whose run calls a tool (replies 1 and 2).
await step("promptAndWait: a tool call", async () => kinds(await client.promptAndWait("Run the echo command", undefined, PATIENCE)));
await step("getLastAssistantText", () => client.getLastAssistantText());

// A slow answer (reply 3), steered (reply 4), then the follow-up (reply 5): one run.
await step("collectEvents + prompt, steer, followUp", async () => {
    const collected = handled(client.collectEvents(PATIENCE));
    const streaming = handled(nextEvent("text_delta", isTextDelta));
    await accepted(() => client.prompt("Talk slowly"));
    await streaming;
    await accepted(() => client.steer("Be brief"));
    await accepted(() => client.followUp("Then summarize"));
    return kinds(await collected);
});

// A slow answer (reply 6), aborted once it streams; waitForIdle resolves at its agent_end.
await step("waitForIdle + prompt, abort", async () => {
    const idle = handled(client.waitForIdle(PATIENCE));
    const streaming = handled(nextEvent("text_delta", isTextDelta));
    await accepted(() => client.prompt("Another slow one"));
    await streaming;
    await accepted(() => client.abort());
    await idle;
    const end = events.findLast((e) => e.type === "agent_end");
    return end.messages.at(-1).stopReason;
});
await step("abort: while idle", () => client.abort());
await step("getLastAssistantText: after the abort", () => client.getLastAssistantText());

await step("bash", () => client.bash("echo from-bash"));
// Stopped once it printed: our `bash_execution_update` (an addition; pi 0.73.1 sends none, so
// with pi this waits a second).
await step("abortBash", async () => {
    const printed = handled(nextEvent("bash_execution_update", (e) => e.type === "bash_execution_update"));
    const running = handled(client.bash("echo started; sleep 30; echo never"));
    await Promise.race([printed, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
    await accepted(() => client.abortBash());
    return await running;
});
// The commands the user ran reach the model with the next prompt (reply 7).
await step("prompt: after bash", async () => {
    const idle = handled(client.waitForIdle(PATIENCE));
    await accepted(() => client.prompt("What did I run?"));
    await idle;
});

await step("setSteeringMode", () => client.setSteeringMode("all"));
await step("setFollowUpMode", () => client.setFollowUpMode("all"));
await step("setThinkingLevel", () => client.setThinkingLevel("low"));
await step("getState: modes and level", () => client.getState());
await step("cycleThinkingLevel", () => client.cycleThinkingLevel());
await step("setModel", () => client.setModel("mock", "mock-other"));
await step("cycleThinkingLevel: a model that cannot reason", () => client.cycleThinkingLevel());
await step("cycleModel", () => client.cycleModel());
await step("setModel: unknown", () => client.setModel("mock", "nope"));
await step("setSessionName", () => client.setSessionName("client session"));
await step("getState: named", () => client.getState());
await step("getSessionStats", () => client.getSessionStats());
await step("getMessages", () => client.getMessages());
const forkable = await step("getForkMessages", () => client.getForkMessages());

const original = (await step("getState: before the fork", () => client.getState()))?.sessionFile;
const slowly = (forkable ?? []).find((m) => m.text === "Talk slowly");
await step("fork", () => client.fork(slowly?.entryId ?? "missing"));
await step("getMessages: forked", () => client.getMessages());
await step("switchSession", () => client.switchSession(original));
await step("getState: switched back", () => client.getState());
// A copy of the current branch as a new session.
await step("clone", () => client.clone());
await step("getState: cloned", () => client.getState());
await step("newSession", () => client.newSession());
await step("newSession: with a parent", () => client.newSession(original));
await step("getState: new", () => client.getState());

// pi 0.73.1 has these; the Rust test lists which of them are not built here yet.
await step("compact", () => client.compact("Keep the decisions"));
await step("setAutoCompaction", () => client.setAutoCompaction(false));
await step("setAutoRetry", () => client.setAutoRetry(false));
await step("abortRetry", () => client.abortRetry());
await step("exportHtml", () => client.exportHtml(join(process.cwd(), "session.html")));

await step("getStderr", () => client.getStderr());
await step("stop", async () => {
    const child = client.process;
    await client.stop();
    return { exitCode: child.exitCode, signalCode: child.signalCode };
});

const methods = Object.getOwnPropertyNames(RpcClient.prototype).filter((name) => name !== "constructor");
process.stdout.write(`${JSON.stringify({ methods, steps })}\n`);
