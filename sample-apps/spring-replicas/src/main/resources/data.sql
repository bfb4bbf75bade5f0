-- A startup write on every replica (as Spring's data scripts do in real services). application_name is the replica
-- name (spring.datasource.hikari.data-source-properties.ApplicationName).
INSERT INTO replica_start (replica) VALUES (current_setting('application_name'));
