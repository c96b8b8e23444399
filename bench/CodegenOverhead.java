import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import rideshare_dal.Hooks;
import rideshare_dal.Queries;

/**
 * Per-call overhead of the generated Java access layer (bench/codegen.sh runs it): each case calls
 * a method of the generated module and, in turn, the same CQL issued by hand with the same driver
 * on the same session (prepared once, executed, its rows listed): the baseline, measured in the
 * same run, calls interleaved. Prints each side's median and p99 in microseconds and their
 * ratios; exits 1 when a ratio misses its target.
 *
 * <p>usage: CodegenOverhead HOST:PORT KEYSPACE CALLS MEDIAN_TARGET P99_TARGET
 */
public final class CodegenOverhead {
    private CodegenOverhead() {}

    /** One call of a case, the {@code i}-th. */
    interface Call {
        void run(int i);
    }

    /** A case: its name, the generated side, the hand-written side, how many calls. */
    record Case(String name, Call gen, Call hand, int calls) {}

    static double percentile(double[] xs, double q) {
        double[] s = xs.clone();
        Arrays.sort(s);
        return s[(int) Math.min(s.length - 1, Math.round(q * (s.length - 1)))];
    }

    /** Timed calls of each side (after a warm-up that lets the JIT compile both), interleaved. */
    static double[][] measure(Case c) {
        for (int i = 0; i < Math.max(200, c.calls() / 2); i++) {
            c.gen().run(i);
            c.hand().run(i);
        }
        double[] g = new double[c.calls()];
        double[] h = new double[c.calls()];
        for (int i = 0; i < c.calls(); i++) {
            boolean genFirst = i % 2 == 0;
            for (int k = 0; k < 2; k++) {
                boolean gen = genFirst == (k == 0);
                long t = System.nanoTime();
                (gen ? c.gen() : c.hand()).run(i);
                double us = (System.nanoTime() - t) / 1000.0;
                if (gen) {
                    g[i] = us;
                } else {
                    h[i] = us;
                }
            }
        }
        return new double[][] {g, h};
    }

    static long micros(Instant t) {
        return ChronoUnit.MICROS.between(Instant.EPOCH, t);
    }

    public static void main(String[] args) {
        String[] hp = args[0].split(":");
        String ks = args[1];
        int calls = Integer.parseInt(args[2]);
        double medianTarget = Double.parseDouble(args[3]);
        double p99Target = Double.parseDouble(args[4]);
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(60))
            .withString(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, "DcInferringLoadBalancingPolicy")
            .build();
        try (CqlSession s = CqlSession.builder()
                .addContactPoint(new InetSocketAddress(hp[0], Integer.parseInt(hp[1])))
                .withConfigLoader(config)
                .withKeyspace(ks)
                .build()) {
            System.exit(run(s, calls, medianTarget, p99Target));
        }
    }

    static PreparedStatement prepare(CqlSession s, String cql) {
        return s.prepare(SimpleStatement.newInstance(cql).setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM));
    }

    static int run(CqlSession s, int calls, double medianTarget, double p99Target) {
        // Keys that exist: the bench reads rows, not misses.
        List<String> drivers = new ArrayList<>();
        s.execute("SELECT driver_id FROM drivers_by_id LIMIT 200").forEach(r -> drivers.add(r.getString(0)));
        List<Row> trips = new ArrayList<>();
        s.execute("SELECT trip_id, city, started_at FROM trips_by_id LIMIT 200").forEach(trips::add);
        return report(cases(s, new Queries(s, new Hooks()), drivers, trips, calls), medianTarget, p99Target);
    }

    /** Each case: the generated call and the same CQL by hand (the i-th call's keys). */
    static List<Case> cases(CqlSession s, Queries q, List<String> drivers, List<Row> trips, int calls) {
        PreparedStatement byDriver = prepare(s, "SELECT started_at, city, distance_km, fare_usd FROM trips_by_driver "
            + "WHERE driver_id = ? ORDER BY started_at DESC LIMIT ?");
        PreparedStatement byId = prepare(s, "SELECT trip_id, driver_id, city, started_at, distance_km, fare_usd, status "
            + "FROM trips_by_id WHERE trip_id = ?");
        PreparedStatement driver = prepare(s, "SELECT full_name, rating, country FROM drivers_by_id WHERE driver_id = ?");
        PreparedStatement byCity = prepare(s, "SELECT started_at, driver_id, fare_usd FROM trips_by_city_date "
            + "WHERE city = ? AND trip_date = ? AND started_at >= ? AND started_at < ? ORDER BY started_at DESC LIMIT ?");
        PreparedStatement rating = prepare(s, "UPDATE drivers_by_id SET rating = ? WHERE driver_id = ?");
        PreparedStatement[] inserts = {
            prepare(s, "INSERT INTO trips_by_driver (driver_id, started_at, trip_id, city, distance_km, fare_usd) "
                + "VALUES (?, ?, ?, ?, ?, ?)"),
            prepare(s, "INSERT INTO trips_by_id (trip_id, driver_id, city, started_at, distance_km, fare_usd, status) "
                + "VALUES (?, ?, ?, ?, ?, ?, ?)"),
            prepare(s, "INSERT INTO trips_by_city_date (city, trip_date, started_at, trip_id, driver_id, fare_usd) "
                + "VALUES (?, ?, ?, ?, ?, ?)"),
        };
        BigDecimal km = new BigDecimal("3.5");
        BigDecimal fare = new BigDecimal("12.25");
        return List.of(
            new Case("q1 tripsByDriverId (LIMIT 20)",
                i -> q.tripsByDriverId(drivers.get(i % drivers.size()), 20L),
                i -> s.execute(byDriver.bind(drivers.get(i % drivers.size()), 20)).all(),
                calls),
            new Case("q3 tripsByTripId",
                i -> q.tripsByTripId(trips.get(i % trips.size()).getUuid(0)),
                i -> s.execute(byId.bind(trips.get(i % trips.size()).getUuid(0))).all(),
                calls),
            new Case("q4 driversByDriverId",
                i -> q.driversByDriverId(drivers.get(i % drivers.size())),
                i -> s.execute(driver.bind(drivers.get(i % drivers.size()))).all(),
                calls),
            new Case("q2 tripsByCityAndStartedAt (1 day)",
                i -> {
                    Row t = trips.get(i % trips.size());
                    Instant day = Instant.EPOCH.plus(t.getLong(2), ChronoUnit.MICROS).truncatedTo(ChronoUnit.DAYS);
                    q.tripsByCityAndStartedAt(t.getString(1), day, day.plus(1, ChronoUnit.DAYS), 50L);
                },
                i -> {
                    Row t = trips.get(i % trips.size());
                    Instant day = Instant.EPOCH.plus(t.getLong(2), ChronoUnit.MICROS).truncatedTo(ChronoUnit.DAYS);
                    LocalDate date = LocalDate.ofInstant(day, ZoneOffset.UTC);
                    s.execute(byCity.bind(t.getString(1), date, micros(day), micros(day.plus(1, ChronoUnit.DAYS)), 50)).all();
                },
                calls),
            new Case("q7 updateDriversRatingByDriverId",
                i -> q.updateDriversRatingByDriverId(new BigDecimal("4.5"), drivers.get(i % drivers.size())),
                i -> s.execute(rating.bind(new BigDecimal("4.5"), drivers.get(i % drivers.size()))),
                calls),
            new Case("q5 insertTrips (3 copies, logged batch)",
                i -> {
                    Instant start = Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i);
                    String d = drivers.get(i % drivers.size());
                    q.insertTrips(UUID.randomUUID(), d, trips.get(i % trips.size()).getString(1), start, km, fare, "completed");
                },
                i -> {
                    Instant start = Instant.parse("2026-01-01T00:00:00Z").plusSeconds(i);
                    String d = drivers.get(i % drivers.size());
                    String city = trips.get(i % trips.size()).getString(1);
                    UUID id = UUID.randomUUID();
                    s.execute(BatchStatement.builder(BatchType.LOGGED)
                        .addStatement(inserts[0].bind(d, micros(start), id, city, km, fare))
                        .addStatement(inserts[1].bind(id, d, city, micros(start), km, fare, "completed"))
                        .addStatement(inserts[2].bind(city, LocalDate.ofInstant(start, ZoneOffset.UTC), micros(start), id, d, fare))
                        .setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM)
                        .build());
                },
                calls / 2));
    }

    /** Measures and prints every case; 1 when a target is missed. */
    static int report(List<Case> cases, double medianTarget, double p99Target) {
        System.out.printf("%-44s %8s %9s %6s %5s %8s %9s %6s  (µs)%n",
            "case", "gen p50", "hand p50", "ratio", "+p50", "gen p99", "hand p99", "ratio");
        List<String> missed = new ArrayList<>();
        for (Case c : cases) {
            double[][] gh = measure(c);
            double gm = percentile(gh[0], 0.5);
            double hm = percentile(gh[1], 0.5);
            double g99 = percentile(gh[0], 0.99);
            double h99 = percentile(gh[1], 0.99);
            System.out.printf("%-44s %8.0f %9.0f %6.2f %5.0f %8.0f %9.0f %6.2f%n",
                c.name(), gm, hm, gm / hm, gm - hm, g99, h99, g99 / h99);
            if (gm / hm > medianTarget) {
                missed.add(String.format("%s: median ratio %.2f > %s", c.name(), gm / hm, medianTarget));
            }
            if (g99 / h99 > p99Target) {
                missed.add(String.format("%s: p99 ratio %.2f > %s", c.name(), g99 / h99, p99Target));
            }
        }
        missed.forEach(m -> System.out.println("target missed: " + m));
        if (missed.isEmpty()) {
            System.out.printf("targets met: every median ratio <= %s, every p99 ratio <= %s%n", medianTarget, p99Target);
        }
        return missed.isEmpty() ? 0 : 1;
    }
}
