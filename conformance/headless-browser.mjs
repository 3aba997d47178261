#!/usr/bin/env node
// A browser for sign-ins nobody watches: BROWSER="node conformance/headless-browser.mjs" makes the adapter "open" the
// authorization URL with it (the tests), and the conformance driver calls `follow` in its own process (a process per
// sign-in was a good part of an auth scenario's time). It requests that URL without following redirects, then the
// address it redirects to (the adapter's loopback callback), as a browser does when an authorization server approves
// at once. Exits 1 when there is no redirect to follow.
import { pathToFileURL } from "node:url";

export async function follow(url) {
  const response = await fetch(url, { redirect: "manual" });
  const location = response.headers.get("location");
  await response.body?.cancel();
  if (!location) throw new Error(`headless-browser: ${url} answered HTTP ${response.status} without a redirect`);
  await (await fetch(new URL(location, url))).body?.cancel();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await follow(process.argv[2]).catch((error) => {
    console.error(error.message);
    process.exit(1);
  });
}
