// Lockdown: no code generation in any form, no GC-observable objects, no stack-trace hook.
// The sandbox context is built without the Eval intrinsic, so blocking the constructors is the
// second layer: even if a future rquickjs added code generation back, they stay blocked.

function lockdown(g) {
  const blocked = function Function() {
    throw new TypeError("The Function constructor is not available in the sandbox");
  };
  const kinds = [function () {}, async function () {}, function* () {}, async function* () {}];
  for (let i = 0; i < kinds.length; i++) {
    const proto = ObjectGetPrototypeOf(kinds[i]);
    const stub = i === 0 ? blocked : function () {
      throw new TypeError("Function constructors are not available in the sandbox");
    };
    defineFixed(stub, "prototype", proto);
    defineFixed(proto, "constructor", stub);
    ObjectFreeze(stub);
  }
  defineFixed(g, "Function", blocked);
  delete g.eval;
  delete g.WeakRef;
  delete g.FinalizationRegistry;
  delete g.Performance;
  // Error.prepareStackTrace would run script code inside every error the prelude or the host
  // makes, before the prelude has branded it.
  defineFixed(Error, "prepareStackTrace", undefined);
}
