import { AsyncResource, executionAsyncId } from "node:async_hooks";
import { bindMakesAccessorsPerCall, useBindWithSharedAccessors } from "../src/async-resource-bind";

// Node's bind takes the `thisArg` its typings leave out.
type BindWithThis = <F extends (...args: any[]) => any>(fn: F, thisArg: unknown) => F;

describe("AsyncResource#bind with shared accessors", () => {
  beforeAll(() => useBindWithSharedAccessors());

  test("every bound function gets the same asyncResource accessors (Node's bind made new ones each time)", () => {
    expect(bindMakesAccessorsPerCall()).toBe(false);
    const accessorsOf = (bound: () => unknown) => Object.getOwnPropertyDescriptor(bound, "asyncResource")!;
    const one = accessorsOf(new AsyncResource("one").bind(() => 1));
    const two = accessorsOf(new AsyncResource("two").bind(() => 2));
    expect(one.get).toBe(two.get);
    expect(one.set).toBe(two.set);
    expect(Object.getPrototypeOf(one.get)).toBe(Function.prototype);
  });

  test("a bound function runs in its resource's scope with the caller's this and arguments, and keeps fn's length", () => {
    const resource = new AsyncResource("t");
    const bound = resource.bind(function (this: unknown, a: number, b: number) {
      return [executionAsyncId(), this, a + b];
    });
    const receiver = { name: "receiver" };
    expect(bound.call(receiver, 1, 2)).toEqual([resource.asyncId(), receiver, 3]);
    expect(executionAsyncId()).not.toBe(resource.asyncId());
    expect(bound.length).toBe(2);
  });

  test("with a thisArg, the bound function runs with that this", () => {
    const resource = new AsyncResource("t");
    const owner = { name: "owner" };
    const bound = (resource.bind as BindWithThis)(function (this: unknown) {
      return [executionAsyncId(), this];
    }, owner);
    expect(bound.call({ name: "other" })).toEqual([resource.asyncId(), owner]);
  });

  test("the deprecated asyncResource accessor reads and writes as in Node, warning once", () => {
    const emit = jest.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    try {
      const resource = new AsyncResource("t");
      const bound = resource.bind(() => executionAsyncId()) as (() => number) & { asyncResource: AsyncResource };
      expect(bound.asyncResource).toBe(resource);
      const other = new AsyncResource("other");
      bound.asyncResource = other;
      expect(bound.asyncResource).toBe(other);
      expect(bound()).toBe(resource.asyncId()); // setting it does not move the function
      const ours = emit.mock.calls.filter((call) => (call as unknown[])[2] === "DEP0172");
      expect(ours).toHaveLength(1);
      expect((ours[0] as unknown[])[1]).toBe("DeprecationWarning");
    } finally {
      emit.mockRestore();
    }
  });

  test("binding what is not a function fails as Node's bind does; the static bind still binds", () => {
    expect(() => new AsyncResource("t").bind(42 as unknown as () => void)).toThrow(expect.objectContaining({ code: "ERR_INVALID_ARG_TYPE" }));
    const bound = AsyncResource.bind((x: number) => x * 2);
    expect(bound(21)).toBe(42);
  });
});
