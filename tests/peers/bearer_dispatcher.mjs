// Preloaded (`node --import`) into the MCP conformance suite, which has no option for request
// headers: every HTTP request it makes, through fetch, undici or node:http, carries
// `Authorization: Bearer $CONFORMANCE_BEARER`, so it can test a hub that requires a token. The
// undici is the suite's own, so fetch and the suite's direct requests share this dispatcher.
import http from "node:http";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const { Agent, setGlobalDispatcher } = require(
  "../node_modules/@modelcontextprotocol/conformance/node_modules/undici",
);

const token = process.env.CONFORMANCE_BEARER;
if (!token) {
  throw new Error("set CONFORMANCE_BEARER to the token the hub accepts");
}

function withBearer(headers) {
  const value = `Bearer ${token}`;
  if (headers == null) return { authorization: value };
  if (Array.isArray(headers)) return [...headers, "authorization", value];
  if (typeof headers[Symbol.iterator] === "function") {
    return [...Array.from(headers).flat(), "authorization", value];
  }
  return { ...headers, authorization: value };
}

setGlobalDispatcher(
  new Agent().compose((dispatch) => (options, handler) =>
    dispatch({ ...options, headers: withBearer(options.headers) }, handler),
  ),
);

// The header-validation scenario builds raw requests with node:http to control header case.
const originalRequest = http.request;
http.request = function request(...args) {
  const outgoing = originalRequest.apply(this, args);
  if (!outgoing.hasHeader("authorization")) {
    outgoing.setHeader("authorization", `Bearer ${token}`);
  }
  return outgoing;
};
