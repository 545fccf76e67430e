/**
 * Upload limits and content sniffing of confirmation files (docs/architecture.md, confirm_payment).
 * The type is decided by the bytes (magic numbers), never by what the uploader declared.
 */

/** Largest accepted confirmation file: 10 MiB. */
export const MAX_CONFIRMATION_BYTES = 10 * 1024 * 1024;

/** Content types a confirmation may have. */
export type ConfirmationFileType = "application/pdf" | "image/jpeg" | "image/png";

/** What an accepted upload is: its real type, or unrecognised bytes sent as one of those types. */
export type UploadedFileType = ConfirmationFileType | "application/octet-stream";

const SIGNATURES: { type: ConfirmationFileType; magic: number[] }[] = [
  // "%PDF-" at offset 0 (ISO 32000-1 §7.5.2; a header further in is not accepted: a receipt
  // generator never writes one, an editor that prepends bytes is exactly what we want to refuse).
  { type: "application/pdf", magic: [0x25, 0x50, 0x44, 0x46, 0x2d] },
  // JPEG SOI marker followed by the first segment's marker byte.
  { type: "image/jpeg", magic: [0xff, 0xd8, 0xff] },
  // PNG signature.
  { type: "image/png", magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
];

/** The type `bytes` really are, or null when they are none of the accepted ones. */
export function detectFileType(bytes: Uint8Array): ConfirmationFileType | null {
  const hit = SIGNATURES.find(({ magic }) => magic.length <= bytes.length && magic.every((b, i) => bytes[i] === b));
  return hit?.type ?? null;
}

/**
 * The type an upload is reviewed as: what its bytes are when they are a PDF, JPEG or PNG (whatever
 * was declared); bytes that are none of these but were sent as one are accepted as unrecognised
 * (`application/octet-stream`: not a PDF, so nothing in them can be validated); null when neither
 * the bytes nor the declared type is accepted.
 */
export function uploadedFileType(bytes: Uint8Array, declaredType: string): UploadedFileType | null {
  return detectFileType(bytes) ?? (SIGNATURES.some(({ type }) => type === normaliseDeclaredType(declaredType)) ? "application/octet-stream" : null);
}

/** The declared type without parameters, lower-case (`Application/PDF; x=y` → `application/pdf`). */
export function normaliseDeclaredType(declared: string): string {
  return declared.split(";")[0].trim().toLowerCase();
}
