-- Fencing Agent SQL fence for PostgreSQL: what `sql uninstall` runs (see fence.sql for the parameters). The
-- installer drops the table's triggers, then the token column when it added it, and the shared objects (registry,
-- functions, fence table) only when no other table of the schema is fenced.

-- @section drop_trigger
DROP TRIGGER IF EXISTS ${trigger} ON ${table}
-- @end

-- ${column} is the quoted token column.
-- @section drop_token_column
ALTER TABLE ${table} DROP COLUMN ${column}
-- @end

-- ${name} is fencing_fenced_table or fencing_fence.
-- @section drop_table
DROP TABLE IF EXISTS ${schema}${name}
-- @end

-- ${name} is fencing_check, fencing_check_row or fencing_check_truncate.
-- @section drop_function
DROP FUNCTION IF EXISTS ${schema}${name}()
-- @end

-- The table's rows of the registry (run whenever the registry exists).
-- @section unregister
DELETE FROM ${schema}fencing_fenced_table WHERE table_schema = ${table_schema} AND table_name = ${table_name}
-- @end
