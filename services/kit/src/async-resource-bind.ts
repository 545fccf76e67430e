import { AsyncResource } from "node:async_hooks";

const DEP0172 = "The asyncResource property on bound functions is deprecated";

/**
 * Makes `AsyncResource#bind` stop changing function prototypes, as Node 24 already does
 * (nodejs/node#58218, #59195); a no-op on a runtime that does not change them.
 *
 * Why: Node 20's `bind` wraps the deprecated `asyncResource` accessors of every function it binds
 * with `deprecate()`, which calls `Object.setPrototypeOf` on each wrapper. Node's http2 client
 * binds one function per request (`ClientHttp2Session.request`), so every gRPC call we make did
 * this, and it kept the call's whole stream alive through young-generation collections: all of
 * it was promoted, and the old generation filled every few seconds (measured on a bare http2
 * client at 1,000 calls/s: 5 full collections in 10 s against 1 with this replacement, and 10–13%
 * less CPU per call). The replacement binds the same way and keeps the accessors, warning once.
 */
export function useBindWithoutPrototypeChange(): void {
  if (!bindChangesPrototypes()) return;
  const nodeBind = AsyncResource.prototype.bind;
  let warned = false;
  const warn = () => {
    if (warned || process.noDeprecation) return;
    warned = true;
    process.emitWarning(DEP0172, "DeprecationWarning", "DEP0172");
  };
  // Node's bind takes the `thisArg` its typings leave out.
  AsyncResource.prototype.bind = function bind<Func extends (...args: any[]) => any>(this: AsyncResource, fn: Func, thisArg?: unknown): Func {
    // Node's own bind refuses what is not a function, with its usual error.
    if (typeof fn !== "function") return (nodeBind as (fn: Func, thisArg?: unknown) => Func).call(this, fn, thisArg);
    const resource = this;
    const bound =
      thisArg === undefined
        ? function (this: unknown, ...args: unknown[]) {
            return resource.runInAsyncScope(fn, this, ...args);
          }
        : this.runInAsyncScope.bind(this, fn, thisArg);
    // What the accessors read and write, as in Node (setting it does not change where `bound` runs).
    let self: AsyncResource = this;
    Object.defineProperties(bound, {
      length: { configurable: true, enumerable: false, value: fn.length, writable: false },
      asyncResource: {
        configurable: true,
        enumerable: true,
        get: () => (warn(), self),
        set: (value: AsyncResource) => {
          warn();
          self = value;
        },
      },
    });
    return bound as Func;
  };
}

/** Whether this runtime's `bind` gives the accessors of a bound function a prototype of their own. */
export function bindChangesPrototypes(): boolean {
  const getter = Object.getOwnPropertyDescriptor(new AsyncResource("probe").bind(() => undefined), "asyncResource")?.get;
  return getter !== undefined && Object.getPrototypeOf(getter) !== Function.prototype;
}
