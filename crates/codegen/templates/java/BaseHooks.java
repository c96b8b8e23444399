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
 *   <li>{@link #nextval(String, String, String)}: a serial or identity column's next value,
 *       made as plan.json's {@code design.ids} states for the column. Cassandra has no
 *       sequence: {@code time_ordered} is a 64-bit time-ordered id made here (milliseconds
 *       since 2020 in the high bits, then the process's node number and a counter), which keeps
 *       a {@code bigint} column's type and lies far above any value a source's sequence reached
 *       (about 9e17 at the end of 2026); {@code application} (a 16- or 32-bit column cannot
 *       hold one) throws: override {@code nextval} (keep the Postgres sequence through the
 *       cut-over, or allocate ids of your own).
 *   <li>{@link #randomUuid(String)}: {@code gen_random_uuid()}, a version 4 UUID.
 *   <li>{@link #timeuuid()}: the id of a row inserted into a table without a key.
 *   <li>{@link #computed(String, Object[])}: an application-computed value, Postgres SQL over the
 *       statement's parameters that the application computes itself.
 * </ul>
 */
public class BaseHooks {
    /**
     * The time-ordered ids' epoch: 2020-01-01T00:00:00Z in milliseconds (41 bits of milliseconds:
     * ids stay positive until 2089). The layout is plan.json's {@code time_ordered} strategy.
     */
    static final long ID_EPOCH_MS = 1_577_836_800_000L;

    private long node = new java.util.Random().nextInt(1024);
    private long idMs;
    private long idCounter;

    /** Hooks whose ids carry a random node number (see {@link #setNode(int)}). */
    public BaseHooks() {}

    /**
     * The node number (0 to 1023) the ids of {@link #nextval(String, String, String)} carry: a
     * process that makes ids needs a number of its own among those that write the same table.
     */
    public synchronized void setNode(int node) {
        this.node = node & 0x3FF;
    }

    /**
     * The next time-ordered id: {@code (ms since ID_EPOCH_MS) << 22 | node << 12 | counter}, 4,096
     * a millisecond, greater than every id this instance made even if the clock goes back.
     */
    protected synchronized long nextId() {
        long ms = Math.max(System.currentTimeMillis() - ID_EPOCH_MS, idMs);
        long counter = ms == idMs ? idCounter + 1 : 0;
        if (counter > 0xFFF) {
            ms += 1;
            counter = 0;
        }
        idMs = ms;
        idCounter = counter;
        return ms << 22 | node << 12 | counter;
    }

    /** The application's clock. */
    public Instant now() {
        return Instant.now();
    }

    /**
     * The next value of {@code sequence} for {@code column} ({@code table.column}) by the plan's
     * {@code strategy} for it: a time-ordered id, or the application's (see the class's
     * documentation).
     */
    public long nextval(String sequence, String column, String strategy) {
        if (!"time_ordered".equals(strategy)) {
            throw new Rt.NotExecutable(column + ": plan.json leaves the new values of nextval('" + sequence
                + "') to the application (design.ids): override Hooks.nextval");
        }
        return nextId();
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
