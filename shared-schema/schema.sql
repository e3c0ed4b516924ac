-- The greeting table, identical in every stack's view. utf8mb4 end to end: the data holds
-- 4-byte characters (emoji) that a 3-byte "utf8" column or connection would mangle.
-- utf8mb4_bin: the lookup is by primary key, and no collation should ever rewrite bytes.
CREATE TABLE IF NOT EXISTS greeting (
  id INT NOT NULL PRIMARY KEY,
  message VARCHAR(128) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
