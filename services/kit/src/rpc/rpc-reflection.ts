import { create, createRegistry, fromBinary, toBinary, type DescFile, type DescMessage, type DescService, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectRouter } from "@connectrpc/connect";
import {
  ServerReflection,
  ServerReflectionRequestSchema,
  ServerReflectionResponseSchema,
  type ServerReflectionRequest,
  type ServerReflectionResponse,
} from "@pgw/proto/gen/grpc/reflection/v1/reflection_pb";
import * as v1alpha from "@pgw/proto/gen/grpc/reflection/v1alpha/reflection_pb";

/**
 * gRPC server reflection (`grpc.reflection.v1` and its older name `v1alpha`) as two ordinary
 * Connect services: tools such as `buf curl` and `grpcurl` ask a port which services it serves and
 * for the file descriptors of their types, so they need no .proto files. Answered from the
 * descriptors protobuf-es embeds in the generated code.
 */
export function registerReflection(router: ConnectRouter): void {
  const services = new Set<DescService>(router.handlers.map((handler) => handler.service));
  services.add(ServerReflection).add(v1alpha.ServerReflection);
  const answer = answering(services);
  router.service(ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) yield answer(request);
    },
  });
  router.service(v1alpha.ServerReflection, {
    async *serverReflectionInfo(requests) {
      for await (const request of requests) {
        yield sameOnTheWire(ServerReflectionResponseSchema, v1alpha.ServerReflectionResponseSchema, answer(sameOnTheWire(v1alpha.ServerReflectionRequestSchema, ServerReflectionRequestSchema, request)));
      }
    },
  });
}

/** `message` as the message of another schema with the same fields (v1alpha and v1 differ only in their package). */
function sameOnTheWire<From extends DescMessage, To extends DescMessage>(from: From, to: To, message: MessageShape<From>): MessageShape<To> {
  return fromBinary(to, toBinary(from, message));
}

/** The file and every file it imports, directly or not, once each, the file first. */
function withImports(file: DescFile, into = new Set<DescFile>()): Set<DescFile> {
  into.add(file);
  for (const dependency of file.dependencies) if (!into.has(dependency)) withImports(dependency, into);
  return into;
}

/** What a response answers, as `create` takes it. */
type Answer = MessageInitShape<typeof ServerReflectionResponseSchema>["messageResponse"];

function answering(services: Set<DescService>): (request: ServerReflectionRequest) => ServerReflectionResponse {
  const files = new Set<DescFile>();
  for (const service of services) withImports(service.file, files);
  const byName = new Map([...files].map((file) => [file.proto.name, file]));
  const types = createRegistry(...files);
  /** The file declaring a type, a service, or a method or field of one (`pkg.Service.Method`). */
  const fileOfSymbol = (symbol: string) => (types.get(symbol) ?? types.get(symbol.slice(0, Math.max(0, symbol.lastIndexOf(".")))))?.file;
  const fileOfExtension = (extendee: string, number: number) => {
    const message = types.getMessage(extendee);
    return message && types.getExtensionFor(message, number)?.file;
  };

  const descriptors = (file: DescFile | undefined, asked: string): Answer =>
    file
      ? { case: "fileDescriptorResponse", value: { fileDescriptorProto: [...withImports(file)].map((f) => toBinary(FileDescriptorProtoSchema, f.proto)) } }
      : notFound(asked);
  const notFound = (asked: string): Answer => ({ case: "errorResponse", value: { errorCode: Code.NotFound, errorMessage: `${asked} not found` } });

  return (request) => {
    const asked = request.messageRequest;
    let messageResponse: Answer;
    switch (asked.case) {
      case "fileByFilename":
        messageResponse = descriptors(byName.get(asked.value), `file ${asked.value}`);
        break;
      case "fileContainingSymbol":
        messageResponse = descriptors(fileOfSymbol(asked.value), `symbol ${asked.value}`);
        break;
      case "fileContainingExtension":
        messageResponse = descriptors(fileOfExtension(asked.value.containingType, asked.value.extensionNumber), `extension ${asked.value.extensionNumber} of ${asked.value.containingType}`);
        break;
      case "allExtensionNumbersOfType": {
        const numbers = [...types].flatMap((type) => (type.kind === "extension" && type.extendee.typeName === asked.value ? [type.number] : []));
        messageResponse = types.getMessage(asked.value) ? { case: "allExtensionNumbersResponse", value: { baseTypeName: asked.value, extensionNumber: numbers } } : notFound(`type ${asked.value}`);
        break;
      }
      case "listServices":
        messageResponse = { case: "listServicesResponse", value: { service: [...services].map((service) => ({ name: service.typeName })) } };
        break;
      default:
        messageResponse = { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "the request asks for nothing" } };
    }
    return create(ServerReflectionResponseSchema, { validHost: request.host, originalRequest: request, messageResponse });
  };
}
