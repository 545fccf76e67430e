import { createHash, randomUUID } from "node:crypto";
import type { Queries } from "./index";
import type { FileContent, FileStorage, StoredFileRef } from "./file-storage";

/** FileStorage on the receipts database (`stored_files`, bytea). */
export function postgresFileStorage(db: Queries): FileStorage {
  return {
    async put({ content, contentType }): Promise<StoredFileRef> {
      const ref = { id: randomUUID(), size: content.byteLength, sha256: createHash("sha256").update(content).digest("hex") };
      await db
        .insertInto("storedFiles")
        .values({ ...ref, contentType, content: Buffer.from(content.buffer, content.byteOffset, content.byteLength) })
        .execute();
      return ref;
    },
    async get(id): Promise<FileContent | null> {
      const row = await db.selectFrom("storedFiles").select(["content", "contentType"]).where("id", "=", id).executeTakeFirst();
      return row ? { content: new Uint8Array(row.content), contentType: row.contentType } : null;
    },
  };
}
