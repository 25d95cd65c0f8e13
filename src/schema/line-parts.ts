/** Parts of a line written by layers above metrics (merge, the shards), typed here so the record needs none of them. */

// Their shapes are part of the line format: declared once, with the schema's descriptions, in nested.ts.
