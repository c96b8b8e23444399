package PACKAGE;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.data.UdtValue;
import com.datastax.oss.driver.api.core.type.DataType;
import com.datastax.oss.driver.api.core.type.DataTypes;
import com.datastax.oss.driver.api.core.type.ListType;
import com.datastax.oss.driver.api.core.type.MapType;
import com.datastax.oss.driver.api.core.type.SetType;
import com.datastax.oss.driver.api.core.type.UserDefinedType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The driver's side of the generated access layer (written by {@code remodel codegen}; do not
 * edit): statements prepared once at the plan's consistency level, results decoded page by page,
 * a write path's statements sent as its plan says. A value is bound as the source's value and
 * converted here to the Java type of the marker's CQL type (a whole number to a CQL int, a
 * timestamp without time zone as UTC, NULL items of an IN list dropped).
 */
public final class Driver {
    private final CqlSession session;

    /** A statement prepared once, with the consistency level it runs at. */
    public record Statement(PreparedStatement prepared, ConsistencyLevel level) {}

    /** A statement with its values, one of a write path's. */
    public record Bound(Statement statement, Object[] values) {}

    /** A table's column as a row read holds it: its target key, source key (or null), decoder (or null). */
    public record Column(String target, String source, String decoder) {}

    /** On a session connected to the plan's keyspace (or a scratch one). */
    public Driver(CqlSession session) {
        this.session = session;
    }

    /** {@code cql} prepared once, run at {@code consistency} ({@code LOCAL_QUORUM}). */
    public Statement prepare(String cql, String consistency) {
        return new Statement(session.prepare(cql), DefaultConsistencyLevel.valueOf(consistency));
    }

    private static BoundStatement bind(Statement s, Object[] values) {
        ColumnDefinitions vars = s.prepared().getVariableDefinitions();
        Object[] out = new Object[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = toCql(vars.get(i).getType(), values[i]);
        }
        return s.prepared().bind(out).setConsistencyLevel(s.level());
    }

    /** Every row of one request (a scan's pages included), decoded by {@code columns}. */
    public List<Map<String, Object>> run(Statement s, Map<String, Column> columns, Object[] values) {
        ResultSet rs = session.execute(bind(s, values));
        ColumnDefinitions defs = rs.getColumnDefinitions();
        int n = defs.size();
        List<Map<String, Object>> out = new ArrayList<>();
        for (Row row : rs) {
            Map<String, Object> r = new HashMap<>();
            for (int i = 0; i < n; i++) {
                String name = defs.get(i).getName().asInternal();
                Object v = fromCql(row.getObject(i));
                Column c = columns.get(name);
                if (c == null) {
                    // A value no column holds (an aggregate the CQL computes): also by its place
                    // from the last column (`#-1` the last).
                    r.put("@" + name, v);
                    r.put("#-" + (n - i), v);
                    continue;
                }
                Object value = Rt.decode(c.decoder(), v);
                r.put(c.target(), value);
                if (c.source() != null) {
                    r.put(c.source(), value);
                }
            }
            out.add(r);
        }
        return out;
    }

    /**
     * The statements of a write path: one alone, several in one batch of {@code kind}
     * ({@code logged}, {@code unlogged}, {@code counter}).
     */
    public void send(List<Bound> statements, String kind, String consistency) {
        send(statements, kind, consistency, 0);
    }

    /**
     * The same, in consecutive batches of at most {@code maxStatements} statements (a batch that
     * could pass Cassandra's size limit, as the plan's {@code batch.max_statements} says; 0: one).
     */
    public void send(List<Bound> statements, String kind, String consistency, int maxStatements) {
        if (statements.isEmpty()) {
            return;
        }
        if (maxStatements > 0 && statements.size() > maxStatements) {
            for (int start = 0; start < statements.size(); start += maxStatements) {
                int end = Math.min(statements.size(), start + maxStatements);
                send(statements.subList(start, end), kind, consistency, 0);
            }
            return;
        }
        if (statements.size() == 1) {
            Bound b = statements.get(0);
            session.execute(bind(b.statement(), b.values()));
            return;
        }
        BatchType type = switch (kind) {
            case "unlogged" -> BatchType.UNLOGGED;
            case "counter" -> BatchType.COUNTER;
            default -> BatchType.LOGGED;
        };
        BatchStatementBuilder batch = BatchStatement.builder(type);
        for (Bound b : statements) {
            batch.addStatement(bind(b.statement(), b.values()));
        }
        session.execute(batch.setConsistencyLevel(DefaultConsistencyLevel.valueOf(consistency)).build());
    }

    /** A value the driver returned as the runtime keeps it (integers as Long, floats as Double). */
    static Object fromCql(Object v) {
        if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
            return ((Number) v).longValue();
        }
        if (v instanceof Float f) {
            return f.doubleValue();
        }
        if (v instanceof Map<?, ?> m) {
            Map<Object, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(fromCql(k), fromCql(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            l.forEach(x -> out.add(fromCql(x)));
            return out;
        }
        if (v instanceof UdtValue u) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (int i = 0; i < u.size(); i++) {
                out.put(u.getType().getFieldNames().get(i).asInternal(), fromCql(u.getObject(i)));
            }
            return out;
        }
        return v;
    }

    private static BigDecimal whole(Object v) {
        BigDecimal d = Rt.decimal(v);
        if (d.setScale(0, RoundingMode.DOWN).compareTo(d) != 0) {
            throw new IllegalArgumentException(v + " is not whole");
        }
        return d;
    }

    /** A source value as the Java type of CQL type {@code t}. */
    static Object toCql(DataType t, Object v) {
        if (v == null) {
            return null;
        }
        if (t instanceof ListType l) {
            return items(l.getElementType(), v, new ArrayList<>());
        }
        if (t instanceof SetType s) {
            return items(s.getElementType(), v, new LinkedHashSet<>());
        }
        if (t instanceof MapType m && v instanceof Map<?, ?> map) {
            Map<Object, Object> out = new LinkedHashMap<>();
            map.forEach((k, x) -> out.put(toCql(m.getKeyType(), k), toCql(m.getValueType(), x)));
            return out;
        }
        if (t instanceof UserDefinedType u && v instanceof Map<?, ?> fields) {
            // An embedded child row: each field of the user type by its name.
            Object[] values = new Object[u.getFieldNames().size()];
            for (int i = 0; i < values.length; i++) {
                values[i] = toCql(u.getFieldTypes().get(i), fields.get(u.getFieldNames().get(i).asInternal()));
            }
            return u.newValue(values);
        }
        if (t.equals(DataTypes.INT)) {
            return whole(v).intValueExact();
        }
        if (t.equals(DataTypes.BIGINT) || t.equals(DataTypes.COUNTER)) {
            return whole(v).longValueExact();
        }
        if (t.equals(DataTypes.SMALLINT)) {
            return whole(v).shortValueExact();
        }
        if (t.equals(DataTypes.TINYINT)) {
            return whole(v).byteValueExact();
        }
        if (t.equals(DataTypes.VARINT)) {
            return v instanceof BigInteger ? v : whole(v).toBigIntegerExact();
        }
        if (t.equals(DataTypes.DECIMAL)) {
            return Rt.asDecimal(v);
        }
        if (t.equals(DataTypes.DOUBLE)) {
            return ((Number) v).doubleValue();
        }
        if (t.equals(DataTypes.FLOAT)) {
            return ((Number) v).floatValue();
        }
        if (t.equals(DataTypes.TIMESTAMP)) {
            return v instanceof LocalDateTime w ? w.toInstant(ZoneOffset.UTC) : (Instant) v;
        }
        if (t.equals(DataTypes.DATE)) {
            return (LocalDate) v;
        }
        if (t.equals(DataTypes.TIME)) {
            return (LocalTime) v;
        }
        if (t.equals(DataTypes.UUID) || t.equals(DataTypes.TIMEUUID)) {
            return Rt.asUuid(v);
        }
        if (t.equals(DataTypes.BLOB)) {
            return (ByteBuffer) v;
        }
        if (t.equals(DataTypes.TEXT) || t.equals(DataTypes.ASCII)) {
            return v.toString();
        }
        return v;
    }

    private static <C extends Collection<Object>> C items(DataType item, Object v, C out) {
        for (Object x : v instanceof Collection<?> c ? c : List.of(v)) {
            if (x instanceof Collection<?> inner) {
                for (Object y : inner) {
                    if (y != null) {
                        out.add(toCql(item, y));
                    }
                }
            } else if (x != null) {
                out.add(toCql(item, x));
            }
        }
        return out;
    }
}
