/**
 * A stand-in for the npm registry (`npm_config_registry`), enough for npm to tell what it has: a package's document
 * (its versions, `latest`) for the packages given, 404 for any other. No tarballs: nothing is installed from it, so
 * npm's own answers for a version it lacks (ETARGET) and a package it lacks (E404) are what a test gets.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface NpmRegistryFixture {
  url: string;
  close(): Promise<void>;
}

/** `packages`: name → the versions the registry has (the last is `latest`). */
export async function startNpmRegistry(packages: Record<string, readonly string[]>): Promise<NpmRegistryFixture> {
  const server = createServer((request, response) => {
    const name = decodeURIComponent((request.url ?? "/").slice(1).split("?")[0]!);
    const versions = packages[name];
    response.writeHead(versions ? 200 : 404, { "content-type": "application/json" });
    if (!versions) return response.end(JSON.stringify({ error: "Not found" }));
    const manifest = (version: string) => ({ name, version, dist: { tarball: `http://127.0.0.1:1/${name}-${version}.tgz` } });
    response.end(
      JSON.stringify({
        name,
        "dist-tags": { latest: versions.at(-1) },
        versions: Object.fromEntries(versions.map((version) => [version, manifest(version)])),
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
