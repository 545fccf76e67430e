import { Code, ConnectError } from "@connectrpc/connect";
import { AppError, ERROR_HTTP_STATUS, fromConnectError, toConnectError, type ErrorCode } from "../src/errors";

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
    [Code.Unavailable, "unavailable"],
    [Code.DeadlineExceeded, "unavailable"],
    [Code.NotFound, "not_found"],
    [Code.Unimplemented, "internal"],
  ] as const)("maps a bare gRPC status %s to %s", (grpcCode, publicCode) => {
    expect(fromConnectError(new ConnectError("peer said no", grpcCode)).code).toBe(publicCode);
  });
});
