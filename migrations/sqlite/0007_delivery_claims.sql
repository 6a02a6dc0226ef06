-- A webhook delivery is claimed by the one worker that works on it, for a lease: with several
-- service instances on one store, each delivery is worked on once; a claim whose worker died
-- lapses and the delivery is taken again. NULL: never claimed.
-- Never edit this file once released; add a new numbered migration instead.

ALTER TABLE webhook_deliveries ADD COLUMN claimed_until_ms INTEGER;
