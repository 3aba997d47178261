#!/usr/bin/env node
// A browser for sign-ins nobody watches (the conformance driver, the tests): BROWSER="node conformance/headless-browser.mjs"
// makes the adapter "open" the authorization URL with it. It requests that URL without following redirects, then the
// address it redirects to (the adapter's loopback callback), as a browser does when an authorization server approves
// at once. Exits 1 when there is no redirect to follow.
const url = process.argv[2];
const response = await fetch(url, { redirect: "manual" });
const location = response.headers.get("location");
if (!location) {
  console.error(`headless-browser: ${url} answered HTTP ${response.status} without a redirect`);
  process.exit(1);
}
await fetch(new URL(location, url));
