package PACKAGE;

import java.time.Instant;
import java.util.UUID;

/**
 * The defaults of what plan.json leaves to the application (written by {@code remodel codegen};
 * do not edit: subclass {@code Hooks} instead).
 *
 * <ul>
 *   <li>{@link #now()}: the clock. plan.json's {@code semantics.now} is
 *       {@code client_statement_start}: each method reads it once when it starts.
 *   <li>{@link #nextval(String, String)}: a serial or identity column's next value. Cassandra has
 *       no sequence: keep the Postgres sequence through the cut-over, or allocate ids of your own.
 *   <li>{@link #randomUuid(String)}: {@code gen_random_uuid()}, a version 4 UUID.
 *   <li>{@link #timeuuid()}: the id of a row inserted into a table without a key.
 *   <li>{@link #computed(String, Object[])}: an application-computed value, Postgres SQL over the
 *       statement's parameters that the application computes itself.
 * </ul>
 */
public class BaseHooks {
    /** The application's clock. */
    public Instant now() {
        return Instant.now();
    }

    /** The next value of {@code sequence} for {@code column} ({@code table.column}). */
    public long nextval(String sequence, String column) {
        throw new Rt.NotExecutable(column + ": nextval('" + sequence + "') is the application's to allocate (Hooks.nextval)");
    }

    /** {@code gen_random_uuid()} for {@code column}. */
    public UUID randomUuid(String column) {
        return UUID.randomUUID();
    }

    /** A new time-based (version 1) UUID: a row id of a table without a key. */
    public UUID timeuuid() {
        return com.datastax.oss.driver.api.core.uuid.Uuids.timeBased();
    }

    /** An application-computed value: {@code sql} (Postgres SQL of {@code $1}…) of {@code args}. */
    public Object computed(String sql, Object[] args) {
        throw new Rt.NotExecutable("the application computes `" + sql + "` (Hooks.computed)");
    }
}
