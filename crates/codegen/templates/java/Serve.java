package PACKAGE;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

/**
 * The protocol of {@code remodel replay --executor} (written by {@code remodel codegen}; do not
 * edit). One JSON request a line on stdin, one answer a line on stdout:
 *
 * <pre>
 * {"pattern": "q1", "params": [...], "now": "...", "drawn": {...}, "computed": [...]}
 * -&gt; {"rows": [[...], ...]} | {"done": true} | {"error": "..."}
 * </pre>
 *
 * <p>{@code params} are the statement's {@code $1…} as Postgres' {@code to_json} writes them;
 * {@code now} is the execution's clock, {@code drawn} the values Postgres drew for an inserted row
 * (a sequence's, a random UUID) and {@code computed} the application-computed values: what an
 * application supplies through {@code Hooks}. {@code Executor} holds the table of the generated
 * methods.
 */
public final class Serve {
    private Serve() {}

    /** One generated method called with a request's parameters, answering its JSON. */
    @FunctionalInterface
    public interface Call {
        /** The answer of {@code q}'s method to parameters {@code p}. */
        Object call(Queries q, List<Object> p);
    }

    /** The application's values of one request, as replay sends them. */
    static final class ReplayHooks extends Hooks {
        Map<String, Object> request = Map.of();

        @Override
        public Instant now() {
            return Rt.timestamptzFromText(String.valueOf(request.get("now")), Rt.UTC);
        }

        private Map<?, ?> drawn() {
            return request.get("drawn") instanceof Map<?, ?> m ? m : Map.of();
        }

        @Override
        public long nextval(String sequence, String column, String strategy) {
            Object v = drawn().get(column);
            if (v == null) {
                throw new Rt.NotExecutable(column + ": replay sent no value for nextval('" + sequence + "')");
            }
            return Rt.decimal(v).longValueExact();
        }

        @Override
        public UUID randomUuid(String column) {
            Object v = drawn().get(column);
            return v == null ? UUID.randomUUID() : UUID.fromString(v.toString());
        }

        @Override
        public Object computed(String sql, Object[] args) {
            if (request.get("computed") instanceof List<?> all) {
                for (Object c : all) {
                    if (c instanceof Map<?, ?> m && sql.equals(m.get("sql"))) {
                        Object ty = m.get("type");
                        return Rt.fromJson(m.get("value"), ty == null ? "any" : ty.toString());
                    }
                }
            }
            throw new Rt.NotExecutable("replay sent no value of `" + sql + "`");
        }
    }

    /** A read's answer: its rows, each the SQL result's columns in order. */
    public static <R> Object rows(List<R> rows, Function<R, Object[]> values) {
        List<Object> out = new ArrayList<>();
        for (R r : rows) {
            List<Object> row = new ArrayList<>();
            for (Object v : values.apply(r)) {
                row.add(Rt.toJson(v));
            }
            out.add(row);
        }
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("rows", out);
        return answer;
    }

    /** A write's answer. */
    public static Object done() {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("done", true);
        return answer;
    }

    @SuppressWarnings("unchecked")
    static Object answer(Map<String, Call> calls, Queries q, ReplayHooks hooks, String line) {
        Map<String, Object> out = new LinkedHashMap<>();
        try {
            Object parsed = new Json(line).value();
            if (!(parsed instanceof Map<?, ?>)) {
                throw new IllegalArgumentException("a request that is no JSON object");
            }
            hooks.request = (Map<String, Object>) parsed;
            Call call = calls.get(String.valueOf(hooks.request.get("pattern")));
            if (call == null) {
                out.put("error", "no generated function for pattern " + hooks.request.get("pattern"));
                return out;
            }
            Object params = hooks.request.get("params");
            return call.call(q, params instanceof List<?> l ? (List<Object>) l : List.of());
        } catch (RuntimeException e) {
            // The method failed: the sample's difference, not the run's end.
            out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
            return out;
        }
    }

    /**
     * Serves requests until stdin ends, connected to {@code --cql HOST:PORT} ({@code REMODEL_CQL})
     * and keyspace {@code --keyspace} ({@code REMODEL_KEYSPACE}, else {@code keyspace}).
     */
    public static void serve(Map<String, Call> calls, String keyspace, String[] args) throws IOException {
        String cql = envOr("REMODEL_CQL", "127.0.0.1:9042");
        String ks = envOr("REMODEL_KEYSPACE", keyspace);
        for (int i = 0; i + 1 < args.length; i += 2) {
            if (args[i].equals("--cql")) {
                cql = args[i + 1];
            } else if (args[i].equals("--keyspace")) {
                ks = args[i + 1];
            }
        }
        int colon = cql.lastIndexOf(':');
        String host = colon > 0 ? cql.substring(0, colon) : cql;
        int port = colon > 0 ? Integer.parseInt(cql.substring(colon + 1)) : 9042;
        // A loaded test machine answers a logged batch slower than the driver's default timeout.
        DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
            .withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(60))
            .withString(DefaultDriverOption.LOAD_BALANCING_POLICY_CLASS, "DcInferringLoadBalancingPolicy")
            .build();
        PrintStream stdout = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (CqlSession session = CqlSession.builder()
                .addContactPoint(new InetSocketAddress(host, port))
                .withConfigLoader(config)
                .withKeyspace(ks)
                .build()) {
            ReplayHooks hooks = new ReplayHooks();
            Queries q = new Queries(session, hooks);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.isBlank()) {
                    stdout.println(Json.write(answer(calls, q, hooks, line)));
                }
            }
        }
    }

    private static String envOr(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isEmpty() ? fallback : v;
    }

    /** A small JSON reader and writer (numbers read exactly: a decimal as {@link BigDecimal}). */
    static final class Json {
        private final String s;
        private int i;

        Json(String s) {
            this.s = s;
        }

        Object value() {
            skip();
            if (i >= s.length()) {
                throw new IllegalArgumentException("JSON ends early");
            }
            char c = s.charAt(i);
            switch (c) {
                case '{':
                    return object();
                case '[':
                    return array();
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    return number();
            }
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private Object literal(String word, Object v) {
            if (!s.startsWith(word, i)) {
                throw new IllegalArgumentException("JSON: unexpected text at " + i);
            }
            i += word.length();
            return v;
        }

        private Map<String, Object> object() {
            Map<String, Object> out = new LinkedHashMap<>();
            i++;
            skip();
            if (s.charAt(i) == '}') {
                i++;
                return out;
            }
            while (true) {
                skip();
                String k = string();
                skip();
                i++; // ':'
                out.put(k, value());
                skip();
                if (s.charAt(i++) == '}') {
                    return out;
                }
            }
        }

        private List<Object> array() {
            List<Object> out = new ArrayList<>();
            i++;
            skip();
            if (s.charAt(i) == ']') {
                i++;
                return out;
            }
            while (true) {
                out.add(value());
                skip();
                if (s.charAt(i++) == ']') {
                    return out;
                }
            }
        }

        private String string() {
            StringBuilder out = new StringBuilder();
            i++;
            while (s.charAt(i) != '"') {
                char c = s.charAt(i++);
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 't' -> out.append('\t');
                    case 'r' -> out.append('\r');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        out.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> out.append(e);
                }
            }
            i++;
            return out.toString();
        }

        private Object number() {
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            String t = s.substring(start, i);
            if (t.isEmpty()) {
                throw new IllegalArgumentException("JSON: unexpected text at " + start);
            }
            if (t.contains(".") || t.contains("e") || t.contains("E")) {
                return new BigDecimal(t);
            }
            BigInteger b = new BigInteger(t);
            return b.bitLength() < 64 ? (Object) b.longValue() : b;
        }

        static String write(Object v) {
            StringBuilder out = new StringBuilder();
            write(v, out);
            return out.toString();
        }

        private static void write(Object v, StringBuilder out) {
            if (v == null) {
                out.append("null");
            } else if (v instanceof Boolean || v instanceof Long || v instanceof Integer || v instanceof BigInteger
                    || v instanceof Double) {
                out.append(v);
            } else if (v instanceof Map<?, ?> m) {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    out.append(first ? "" : ", ");
                    first = false;
                    quote(String.valueOf(e.getKey()), out);
                    out.append(": ");
                    write(e.getValue(), out);
                }
                out.append('}');
            } else if (v instanceof List<?> l) {
                out.append('[');
                for (int k = 0; k < l.size(); k++) {
                    out.append(k == 0 ? "" : ", ");
                    write(l.get(k), out);
                }
                out.append(']');
            } else {
                quote(v.toString(), out);
            }
        }

        private static void quote(String s, StringBuilder out) {
            out.append('"');
            for (int k = 0; k < s.length(); k++) {
                char c = s.charAt(k);
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    default -> {
                        if (c < 0x20) {
                            out.append(String.format("\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }
}
