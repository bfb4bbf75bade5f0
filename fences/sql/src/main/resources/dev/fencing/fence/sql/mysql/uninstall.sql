-- Fencing Agent SQL fence for MariaDB and MySQL: what `sql uninstall` runs (see fence.sql for the parameters). The
-- installer drops the table's triggers, then the token column when it added it, and the shared objects (registry,
-- procedures, stripe and fence tables) only when no other table of the database is fenced.

-- @section drop_trigger
DROP TRIGGER IF EXISTS ${schema}${trigger}
-- @end

-- ${column} is the quoted token column.
-- @section drop_token_column
ALTER TABLE ${table} DROP COLUMN ${column}
-- @end

-- ${name} is fencing_fenced_table, fencing_fence_stripe or fencing_fence.
-- @section drop_table
DROP TABLE IF EXISTS ${schema}${name}
-- @end

-- ${name} is one of the procedures, every version (fencing_check_v3, fencing_check_v2, fencing_check_v1, ...).
-- @section drop_procedure
DROP PROCEDURE IF EXISTS ${schema}${name}
-- @end

-- The table's rows of the registry (run whenever the registry exists).
-- @section unregister
DELETE FROM ${schema}fencing_fenced_table WHERE table_schema = ${table_schema} AND table_name = ${table_name}
-- @end
