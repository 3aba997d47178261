/**
 * A fixture HTTP server in a child process of its own. The fixture prints `{"port": n}` as its first line once it
 * listens; `stop` kills it and waits for the exit.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface FixtureProcess {
  /** `http://127.0.0.1:<port>` */
  base: string;
  stop(): Promise<void>;
}

export async function startFixtureProcess(script: string, label: string, env: Record<string, string> = {}): Promise<FixtureProcess> {
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${label} exited with ${code}`)));
    createInterface({ input: child.stdout }).once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}
