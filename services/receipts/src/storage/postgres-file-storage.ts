import { createHash, randomUUID } from "node:crypto";
import type { Db } from "../store";
import type { FileContent, FileStorage, StoredFileRef } from "./file-storage";

/** FileStorage on the receipts database (`stored_files`, bytea). */
export function postgresFileStorage(db: Db): FileStorage {
  return {
    async put({ content, contentType }): Promise<StoredFileRef> {
      const ref = { id: randomUUID(), size: content.byteLength, sha256: createHash("sha256").update(content).digest("hex") };
      await db.storedFile.create({ data: { ...ref, contentType, content: new Uint8Array(content) } });
      return ref;
    },
    async get(id): Promise<FileContent | null> {
      const row = await db.storedFile.findUnique({ where: { id } });
      return row && { content: new Uint8Array(row.content), contentType: row.contentType };
    },
  };
}
