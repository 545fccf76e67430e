import { AsyncResource } from "node:async_hooks";

const DEP0172 = "The asyncResource property on bound functions is deprecated";
/** Where a bound function keeps the resource its deprecated `asyncResource` accessors read and write. */
const RESOURCE = Symbol("asyncResource");

/**
 * Makes `AsyncResource#bind` give every bound function the same `asyncResource` accessors; a no-op
 * on a runtime whose `bind` already does, or no longer defines them.
 *
 * Why: Node's `bind` (20 and 24 alike) defines the deprecated `asyncResource` accessors of each
 * function it binds with fresh getter and setter closures (Node 20 also sets each one's prototype).
 * Fresh accessors cannot share a hidden class, so V8 makes a new one per bound function, in the old
 * generation, and it holds the closures and through them the bound function and what it binds.
 * Node's http2 client binds one function per request (`ClientHttp2Session.request()`) to the
 * request's stream: every gRPC call we made was thus kept alive through young-generation
 * collections and promoted, filling the old generation every few seconds. Measured on our client
 * at 1,000 calls/s on Node 20: 41 MB promoted in 10 s, 15 MB with shared accessors.
 * The replacement binds exactly as Node does and keeps the accessors, which still warn once.
 */
export function useBindWithSharedAccessors(): void {
  if (!bindMakesAccessorsPerCall()) return;
  const nodeBind = AsyncResource.prototype.bind;
  let warned = false;
  const warn = () => {
    if (warned || process.noDeprecation) return;
    warned = true;
    process.emitWarning(DEP0172, "DeprecationWarning", "DEP0172");
  };
  const asyncResource = {
    configurable: true,
    enumerable: true,
    get(this: Record<symbol, AsyncResource>) {
      warn();
      return this[RESOURCE];
    },
    set(this: Record<symbol, AsyncResource>, value: AsyncResource) {
      warn();
      this[RESOURCE] = value;
    },
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
    Object.defineProperty(bound, "length", { configurable: true, enumerable: false, value: fn.length, writable: false });
    // Setting asyncResource changes what it reads, not where `bound` runs (as in Node).
    Object.defineProperty(bound, RESOURCE, { configurable: true, enumerable: false, writable: true, value: this });
    Object.defineProperty(bound, "asyncResource", asyncResource);
    return bound as Func;
  };
}

/** Whether this runtime's `bind` gives each bound function accessors of its own. */
export function bindMakesAccessorsPerCall(): boolean {
  const getterOf = () => Object.getOwnPropertyDescriptor(new AsyncResource("probe").bind(() => undefined), "asyncResource")?.get;
  const getter = getterOf();
  return getter !== undefined && getter !== getterOf();
}
