/**
 * The MCP SDK (the connection code) loads only when a call may follow: not at startup and not for a prompt that
 * offers the model no MCP tool, but as soon as a prompt offers one the model can call without a ToolSearch first
 * (a direct tool), so that its first call does not wait for the load. Seen through a loader hook in this test's own
 * process (a fresh one: this file is in vitest.config.ts's NEEDS_OWN_PROCESS): the files of the SDK that Node loads.
 */
import { register } from "node:module";
import { MessageChannel } from "node:worker_threads";
import { afterEach, describe, expect, test } from "vitest";
import { CORPUS_SERVER_SCRIPT, firstCorpusServers, prepareCorpusAgent } from "../bench/corpus.ts";
import { currentHost } from "./helpers/hosts.ts";
import { type PiSession, startSession } from "./helpers/pi-session.ts";
import { descendantProcesses } from "./helpers/processes.ts";

const SDK_CLIENT = "/@modelcontextprotocol/client/dist/index.mjs";
const loadedUrls: string[] = [];
const { port1, port2 } = new MessageChannel();
port1.on("message", (url: string) => loadedUrls.push(url));
port1.unref();
const hook = `export async function initialize({ port }) { globalThis.port = port; }
export async function load(url, context, next) { globalThis.port.postMessage(url); return next(url, context); }`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });

const sdkLoaded = () => loadedUrls.some((url) => url.includes(SDK_CLIENT));
/** The hook's thread posts asynchronously, and the preload starts after the prompt's first events. */
const settle = () => new Promise((done) => setTimeout(done, 500));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sessionWith(directTools: boolean): Promise<PiSession> {
  const [corpusServer] = firstCorpusServers(1);
  const agent = await prepareCorpusAgent([corpusServer!], { directTools });
  cleanups.push(agent.cleanup);
  const pi = await startSession({ extensions: ["pi-mcp-adapter.ts"], agentDir: agent.agentDir, cwd: agent.cwd, script: ["Hello."] });
  cleanups.push(() => pi.dispose());
  return pi;
}

// In this order: once loaded, the SDK stays loaded in this process.
describe(`loading the connection code on Pi ${currentHost().version}`, () => {
  test("a prompt that offers no MCP tool loads nothing", async () => {
    const pi = await sessionWith(false);
    await pi.prompt("hi");
    await settle();
    expect(sdkLoaded()).toBe(false);
  });

  test("a prompt that offers a direct tool loads it while the model thinks, and starts no server", async () => {
    const pi = await sessionWith(true);
    await settle();
    expect(sdkLoaded()).toBe(false);
    await pi.prompt("hi");
    await expect.poll(sdkLoaded).toBe(true);
    expect(await descendantProcesses(CORPUS_SERVER_SCRIPT)).toEqual([]);
  });
});
