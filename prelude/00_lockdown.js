// Lockdown: no code generation in any form, no GC-observable objects.
// The sandbox context is built without the Eval intrinsic, so this is the second layer: even if a
// future rquickjs added code generation back, the constructors stay blocked.

function lockdown(g) {
  const blocked = function Function() {
    throw new TypeError("The Function constructor is not available in the sandbox");
  };
  const kinds = [
    function () {},
    async function () {},
    function* () {},
    async function* () {},
  ];
  for (const kind of kinds) {
    const proto = Object.getPrototypeOf(kind);
    const stub = kind === kinds[0] ? blocked : function () {
      throw new TypeError("Function constructors are not available in the sandbox");
    };
    Object.defineProperty(stub, "prototype", { value: proto, writable: false, configurable: false });
    Object.defineProperty(proto, "constructor", { value: stub, writable: false, configurable: false });
    Object.freeze(stub);
  }
  Object.defineProperty(g, "Function", { value: blocked, writable: false, configurable: false, enumerable: false });
  for (const name of ["eval", "WeakRef", "FinalizationRegistry", "Performance"]) {
    delete g[name];
  }
}
