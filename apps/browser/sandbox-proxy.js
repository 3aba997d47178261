// A view's sandbox page (apps/page-server.ts serves it under the view's Content-Security-Policy, on its server's own
// origin): it writes the view's HTML into a frame of the same origin, which inherits the policy, and relays messages
// between the host page and the view (the MCP Apps sandbox proxy). `SANDBOX` is set by the page: { hostOrigin, allow }.
const inner = document.createElement("iframe");
inner.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
if (SANDBOX.allow) inner.setAttribute("allow", SANDBOX.allow);
document.body.append(inner);

addEventListener("message", (event) => {
  if (event.source === parent && event.origin === SANDBOX.hostOrigin) {
    const message = event.data;
    if (message?.method === "ui/notifications/sandbox-resource-ready") {
      const page = inner.contentDocument;
      page.open();
      page.write(String(message.params?.html ?? ""));
      page.close();
    } else inner.contentWindow?.postMessage(message, location.origin);
  } else if (event.source === inner.contentWindow && event.origin === location.origin) {
    parent.postMessage(event.data, SANDBOX.hostOrigin);
  }
});

parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, SANDBOX.hostOrigin);
