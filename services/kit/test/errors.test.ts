import { Code, ConnectError } from "@connectrpc/connect";
import { AppError, ERROR_HTTP_STATUS, type ErrorCode } from "@pgw/contracts";
import { fromConnectError, toConnectError } from "@pgw/kit/rpc";

describe("error mapping between services and HTTP", () => {
  it.each(Object.keys(ERROR_HTTP_STATUS) as ErrorCode[])("carries %s across gRPC with its details", (code) => {
    const details = [{ field: "amount", issue: "must be positive" }];
    const back = fromConnectError(toConnectError(new AppError(code, "message text", details)));
    expect({ code: back.code, message: back.message, details: back.details }).toEqual({ code, message: "message text", details });
  });

  it("turns unknown failures into internal without leaking their message", () => {
    const ce = toConnectError(new Error("password=hunter2"));
    expect(ce.code).toBe(Code.Internal);
    expect(ce.rawMessage).toBe("internal error");
    expect(fromConnectError(ce).code).toBe("internal");
  });

  it.each([
    [Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" }), Code.Unavailable],
    [Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }), Code.Unavailable],
    [new Error("wrapped", { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }) }), Code.Unavailable],
    [new Error("timeout exceeded when trying to connect"), Code.Unavailable],
    [new Error("transaction exceeded 5000 ms; rolled back"), Code.Unavailable],
    [new Error("no database connection within 3000 ms"), Code.Unavailable],
    [Object.assign(new Error("duplicate key value"), { code: "23505" }), Code.Internal],
  ] as const)("maps an infrastructure failure %p to %s", (err, code) => {
    expect(toConnectError(err).code).toBe(code);
  });

  it.each([
    [Code.Unavailable, "unavailable"],
    [Code.DeadlineExceeded, "unavailable"],
    [Code.NotFound, "not_found"],
    [Code.Unimplemented, "internal"],
  ] as const)("maps a bare gRPC status %s to %s", (grpcCode, publicCode) => {
    expect(fromConnectError(new ConnectError("peer said no", grpcCode)).code).toBe(publicCode);
  });

  it("maps a call the transport could not carry (no answer read from the peer, a Node error as cause) to unavailable, and a peer's own internal answer to internal", () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(fromConnectError(new ConnectError("socket hang up", Code.Aborted, undefined, undefined, reset)).code).toBe("unavailable");
    const handshake = Object.assign(new Error("unable to verify the first certificate"), { code: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    expect(fromConnectError(new ConnectError("unable to verify the first certificate", Code.Internal, undefined, undefined, handshake)).code).toBe("unavailable");
    const answered = Object.assign(new ConnectError("internal error", Code.Internal), { isWireError: true, cause: new Error("x") });
    expect(fromConnectError(answered).code).toBe("internal");
    expect(fromConnectError(new TypeError("a bug of ours")).code).toBe("internal");
  });
});
