-- Receipt PDFs are rendered when downloaded, from the item's facts, instead of stored at pay time.
ALTER TABLE "sandbox_evidence_items" DROP COLUMN "receipt";
