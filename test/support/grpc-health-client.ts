import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  HealthCheckRequestSchema,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus,
  type HealthCheckResponse,
} from "@pgw/proto/gen/grpc/health/v1/health_pb";

const HealthClient = grpc.makeGenericClientConstructor(
  {
    Check: {
      path: "/grpc.health.v1.Health/Check",
      requestStream: false,
      responseStream: false,
      requestSerialize: (req: { service: string }) => Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, req))),
      requestDeserialize: (buf: Buffer) => fromBinary(HealthCheckRequestSchema, buf),
      responseSerialize: (res: HealthCheckResponse) => Buffer.from(toBinary(HealthCheckResponseSchema, res)),
      responseDeserialize: (buf: Buffer) => fromBinary(HealthCheckResponseSchema, buf),
    },
  },
  "Health",
);

/**
 * grpc.health.v1 Check through a plain @grpc/grpc-js client (h2c, insecure), the way Kubernetes'
 * grpc probe or grpcurl would call it. Answers the status name, e.g. "SERVING".
 */
export function grpcHealthStatus(address: string, service = ""): Promise<string> {
  const client = new HealthClient(address, grpc.credentials.createInsecure());
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (req: { service: string }) => Buffer.from(toBinary(HealthCheckRequestSchema, create(HealthCheckRequestSchema, req))),
      (buf: Buffer) => fromBinary(HealthCheckResponseSchema, buf),
      { service },
      { deadline: Date.now() + 5000 },
      (err: grpc.ServiceError | null, res?: HealthCheckResponse) => {
        client.close();
        if (err) reject(err);
        else resolve(HealthCheckResponse_ServingStatus[res!.status]);
      },
    );
  });
}
