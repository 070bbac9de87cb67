// One script, two MCP servers, calls in parallel: what an agent would otherwise do in four
// round trips through the model. Run it with:
//   capabilities --config config-examples/multi-source.toml exec config-examples/multi-source.js

const [tokyo, paris, echo] = await Promise.all([
  time.getCurrentTime({ timezone: "Asia/Tokyo" }),
  time.getCurrentTime({ timezone: "Europe/Paris" }),
  everything.echo({ message: "hello from a sandboxed script" }),
]);

// Structured results come back as plain objects.
const sum = await everything.getSum({ a: 19, b: 23 });

// A tool failure is a ToolError the script can catch.
let failure = null;
try {
  await time.getCurrentTime({ timezone: "Mars/Olympus_Mons" });
} catch (error) {
  failure = { name: error.name, code: error.code, address: error.address };
}

console.log(`Tokyo is ${tokyo.datetime}`);
return {
  tokyo: tokyo.datetime,
  paris: paris.datetime,
  echo,
  sum,
  failure,
};
