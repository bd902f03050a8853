// @ccproxy/client: the types of the ccproxy webview protocol and a small client.
export * from "./protocol.js";
export * from "./client.js";
