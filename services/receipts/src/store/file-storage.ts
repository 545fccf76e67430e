/**
 * Durable storage of confirmation uploads and cached provider receipts. Postgres first
 * (postgres-file-storage.ts); an S3-compatible store implements the same two calls with the id as
 * the object key and the content type and digest as object metadata.
 */

/** What a stored file is known by. */
export interface StoredFileRef {
  id: string;
  size: number;
  /** Hex SHA-256 of the content. */
  sha256: string;
}

/** A stored file's bytes. */
export interface FileContent {
  content: Uint8Array;
  contentType: string;
}

export interface FileStorage {
  /** Stores the bytes durably (returns once they are committed) under a new id. */
  put(file: FileContent): Promise<StoredFileRef>;
  /** The bytes stored under `id`, or null. */
  get(id: string): Promise<FileContent | null>;
}
