CREATE TABLE IF NOT EXISTS "shop"."processed" (
  event_id varchar(64) PRIMARY KEY,
  processed_at timestamptz NOT NULL DEFAULT now()
);

