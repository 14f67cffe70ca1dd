"""On PostgreSQL, hold "an answer's weights sum to 100" in the database itself.

A deferred constraint trigger checks each touched answer at commit, so a service may write an
answer's features one row at a time inside its transaction. SQLite has no deferred triggers; there
the services' validation holds the rule alone.
"""

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION surveys_check_feature_weights() RETURNS trigger AS $$
DECLARE
    target_answer bigint;
    total integer;
BEGIN
    IF TG_OP = 'DELETE' THEN target_answer := OLD.answer_id; ELSE target_answer := NEW.answer_id; END IF;
    SELECT SUM(weight) INTO total FROM surveys_feature WHERE answer_id = target_answer;
    IF total IS NOT NULL AND total <> 100 THEN
        RAISE EXCEPTION 'answer %: feature weights sum to %, not 100', target_answer, total
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE CONSTRAINT TRIGGER feature_weights_sum_to_100
    AFTER INSERT OR UPDATE OR DELETE ON surveys_feature
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION surveys_check_feature_weights();
"""

DROP = """
DROP TRIGGER IF EXISTS feature_weights_sum_to_100 ON surveys_feature;
DROP FUNCTION IF EXISTS surveys_check_feature_weights();
"""


def run_on_postgresql(schema_editor, sql: str) -> None:
    # A plain cursor: the SQL holds '%' placeholders of PL/pgSQL, not of the driver.
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(sql)


def create_trigger(apps, schema_editor):
    run_on_postgresql(schema_editor, CREATE)


def drop_trigger(apps, schema_editor):
    run_on_postgresql(schema_editor, DROP)


class Migration(migrations.Migration):
    dependencies = [("surveys", "0001_study_domain")]

    operations = [migrations.RunPython(create_trigger, drop_trigger)]
