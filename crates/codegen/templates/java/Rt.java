package PACKAGE;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.nio.ByteBuffer;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * SQL's semantics for the generated access layer (written by {@code remodel codegen}; do not
 * edit): the Java twin of the Python package's {@code _runtime.py}.
 *
 * <p>plan.json states values as expressions with the meaning Postgres gives them: NULL
 * ({@code null}) propagates through operators and functions, a filter keeps a row only when it
 * is TRUE, AND and OR are three-valued. These helpers evaluate them so; the generated methods
 * call them and nothing else computes a value the plan does not state. Values are kept as
 * {@link Long} (integers), {@link BigDecimal}, {@link Double}, {@link String}, {@link Boolean},
 * {@link LocalDate}, {@link LocalTime}, {@link Instant} (a {@code timestamptz}),
 * {@link LocalDateTime} (a {@code timestamp} without time zone), {@link UUID},
 * {@link ByteBuffer} and {@link Interval}.
 */
public final class Rt {
    private Rt() {}

    /** UTC. */
    public static final ZoneId UTC = ZoneOffset.UTC;

    /** A row read, by source column ({@code trips.city}) and by target column ({@code @trips_by_id.city}). */
    public static Map<String, Object> newRow() {
        return new HashMap<>();
    }

    /** A value the plan leaves to the application (a hook it did not provide), or states no way to. */
    public static final class NotExecutable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        /** With its message. */
        public NotExecutable(String message) {
            super(message);
        }
    }

    /** The value itself, typed as an object (keeps a conditional expression from unboxing). */
    public static Object obj(Object v) {
        return v;
    }

    /** A map of alternating keys and values (nulls allowed). */
    public static Map<String, Object> map(Object[] kv) {
        Map<String, Object> out = new HashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            out.put(String.valueOf(kv[i]), kv[i + 1]);
        }
        return out;
    }

    /** A row value of SQL, {@code (a, b)}. */
    public static List<Object> tuple(Object[] items) {
        return java.util.Arrays.asList(items);
    }

    // ------------------------------------------------------------ three-valued logic

    /** A filter's verdict: only TRUE keeps a row (NULL does not). */
    public static boolean isTrue(Object v) {
        return Boolean.TRUE.equals(v);
    }

    /** SQL's AND: FALSE wins, then NULL. */
    public static Boolean and(Object a, Object b) {
        if (Boolean.FALSE.equals(a) || Boolean.FALSE.equals(b)) {
            return false;
        }
        return a == null || b == null ? null : Boolean.TRUE;
    }

    /** SQL's OR: TRUE wins, then NULL. */
    public static Boolean or(Object a, Object b) {
        if (Boolean.TRUE.equals(a) || Boolean.TRUE.equals(b)) {
            return true;
        }
        return a == null || b == null ? null : Boolean.FALSE;
    }

    /** SQL's NOT (NOT NULL is NULL). */
    public static Boolean not(Object a) {
        return a == null ? null : !((Boolean) a);
    }

    /** {@code v IS [NOT] NULL}. */
    public static Boolean isNull(Object v, boolean negated) {
        return negated ? v != null : v == null;
    }

    // ------------------------------------------------------------ comparison

    private static boolean isNumber(Object v) {
        return v instanceof Number;
    }

    /** A number as an exact decimal. */
    public static BigDecimal decimal(Object v) {
        if (v instanceof BigDecimal d) {
            return d;
        }
        if (v instanceof BigInteger i) {
            return new BigDecimal(i);
        }
        if (v instanceof Double || v instanceof Float) {
            return new BigDecimal(((Number) v).doubleValue());
        }
        if (v instanceof Number n) {
            return BigDecimal.valueOf(n.longValue());
        }
        return new BigDecimal(String.valueOf(v).trim());
    }

    /** The order of two values of one kind (a date against an instant is its midnight). */
    @SuppressWarnings("unchecked")
    public static int order(Object a, Object b) {
        if (isNumber(a) && isNumber(b)) {
            return decimal(a).compareTo(decimal(b));
        }
        Object x = instantOf(a, b);
        Object y = instantOf(b, a);
        if (x instanceof UUID u && y instanceof UUID v) {
            int c = Long.compareUnsigned(u.getMostSignificantBits(), v.getMostSignificantBits());
            return c != 0 ? c : Long.compareUnsigned(u.getLeastSignificantBits(), v.getLeastSignificantBits());
        }
        if (x instanceof Interval i && y instanceof Interval j) {
            return Long.compare(i.approxMicros(), j.approxMicros());
        }
        if (x instanceof ByteBuffer i && y instanceof ByteBuffer j) {
            return i.compareTo(j);
        }
        if (x instanceof String s && y instanceof String t) {
            return compareCodePoints(s, t);
        }
        if (x instanceof Comparable<?> c && x.getClass().equals(y.getClass())) {
            return ((Comparable<Object>) c).compareTo(y);
        }
        throw new IllegalArgumentException("cannot compare " + a + " with " + b);
    }

    private static int compareCodePoints(String s, String t) {
        int i = 0;
        int j = 0;
        while (i < s.length() && j < t.length()) {
            int c = s.codePointAt(i);
            int d = t.codePointAt(j);
            if (c != d) {
                return Integer.compare(c, d);
            }
            i += Character.charCount(c);
            j += Character.charCount(d);
        }
        return Integer.compare(s.length() - i, t.length() - j);
    }

    /** {@code v} in the form it compares with {@code other} (dates and wall times as instants). */
    private static Object instantOf(Object v, Object other) {
        boolean instant = other instanceof Instant;
        boolean wall = other instanceof LocalDateTime;
        if (v instanceof LocalDate d && (instant || wall)) {
            return instant ? d.atStartOfDay(UTC).toInstant() : d.atStartOfDay();
        }
        if (v instanceof LocalDateTime t && instant) {
            return t.toInstant(ZoneOffset.UTC);
        }
        if (v instanceof Instant && other instanceof LocalDateTime) {
            return v;
        }
        return v;
    }

    private static Object comparableOther(Object b, Object a) {
        return instantOf(b, a);
    }

    /** {@code a op b} for {@code eq ne lt le gt ge}; rows item by item, as SQL compares them. */
    public static Boolean compare(String op, Object a, Object b) {
        if (a instanceof List<?> x && b instanceof List<?> y) {
            return compareRows(op, x, y);
        }
        if (a == null || b == null) {
            return null;
        }
        Object x = instantOf(a, b);
        Object y = comparableOther(b, a);
        if (x instanceof LocalDateTime && y instanceof Instant) {
            x = ((LocalDateTime) x).toInstant(ZoneOffset.UTC);
        }
        if (x instanceof Boolean p && y instanceof Boolean q) {
            return check(op, Boolean.compare(p, q));
        }
        if (op.equals("eq") || op.equals("ne")) {
            boolean same = (isNumber(x) && isNumber(y)) || x.getClass().equals(y.getClass())
                ? order(x, y) == 0 : Objects.equals(x, y);
            return op.equals("eq") == same;
        }
        return check(op, order(x, y));
    }

    private static Boolean check(String op, int c) {
        return switch (op) {
            case "eq" -> c == 0;
            case "ne" -> c != 0;
            case "lt" -> c < 0;
            case "le" -> c <= 0;
            case "gt" -> c > 0;
            case "ge" -> c >= 0;
            default -> throw new IllegalArgumentException("comparison " + op);
        };
    }

    private static Boolean compareRows(String op, List<?> a, List<?> b) {
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            Object x = a.get(i);
            Object y = b.get(i);
            if (x == null || y == null) {
                return null;
            }
            if (!isTrue(compare("eq", x, y))) {
                if (op.equals("eq") || op.equals("ne")) {
                    return op.equals("ne");
                }
                return compare(op, x, y);
            }
        }
        return op.equals("eq") || op.equals("le") || op.equals("ge");
    }

    /** {@code v [NOT] IN (items)}: NULL when not found and an item (or {@code v}) is NULL. */
    public static Boolean inList(Object v, List<Object> items, boolean negated) {
        if (v == null) {
            return null;
        }
        boolean hit = false;
        boolean nulls = false;
        for (Object x : items) {
            if (x == null) {
                nulls = true;
            } else if (isTrue(compare("eq", v, x))) {
                hit = true;
            }
        }
        Boolean found = hit ? Boolean.TRUE : (nulls ? null : Boolean.FALSE);
        return negated ? not(found) : found;
    }

    /** The values of an IN list whose items may be lists (a parameter sent as a list). */
    public static List<Object> flatten(Object[] items) {
        List<Object> out = new ArrayList<>();
        for (Object x : items) {
            if (x instanceof Collection<?> c) {
                out.addAll(c);
            } else {
                out.add(x);
            }
        }
        return out;
    }

    /** {@code s LIKE pattern} ({@code %} any run, {@code _} one character, a backslash escapes). */
    public static Boolean like(Object s, Object pattern, boolean caseInsensitive) {
        if (s == null || pattern == null) {
            return null;
        }
        String p = pattern.toString();
        StringBuilder re = new StringBuilder();
        for (int i = 0; i < p.length(); i++) {
            char c = p.charAt(i);
            if (c == '\\' && i + 1 < p.length()) {
                re.append(Pattern.quote(String.valueOf(p.charAt(++i))));
            } else if (c == '%') {
                re.append(".*");
            } else if (c == '_') {
                re.append('.');
            } else {
                re.append(Pattern.quote(String.valueOf(c)));
            }
        }
        int flags = Pattern.DOTALL | (caseInsensitive ? Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE : 0);
        return Pattern.compile(re.toString(), flags).matcher(s.toString()).matches();
    }

    // ------------------------------------------------------------ arithmetic

    private static boolean integral(Object v) {
        return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte
            || v instanceof BigInteger;
    }

    private static boolean floating(Object v) {
        return v instanceof Double || v instanceof Float;
    }

    /** An integer result as a {@link Long} (a {@link BigInteger} beyond it). */
    private static Object integer(BigInteger v) {
        return v.bitLength() < 64 ? (Object) v.longValue() : v;
    }

    private static BigInteger big(Object v) {
        return v instanceof BigInteger b ? b : BigInteger.valueOf(((Number) v).longValue());
    }

    private static Object arith(Object a, Object b, char op) {
        if (integral(a) && integral(b)) {
            BigInteger x = big(a);
            BigInteger y = big(b);
            return integer(switch (op) {
                case '+' -> x.add(y);
                case '-' -> x.subtract(y);
                case '*' -> x.multiply(y);
                default -> throw new IllegalArgumentException(String.valueOf(op));
            });
        }
        if (floating(a) || floating(b)) {
            double x = ((Number) a).doubleValue();
            double y = ((Number) b).doubleValue();
            return op == '+' ? x + y : op == '-' ? x - y : x * y;
        }
        BigDecimal x = decimal(a);
        BigDecimal y = decimal(b);
        return op == '+' ? x.add(y) : op == '-' ? x.subtract(y) : x.multiply(y);
    }

    /** {@code -a}. */
    public static Object neg(Object a) {
        if (a == null) {
            return null;
        }
        return arith(0L, a, '-');
    }

    /** {@code a + b} (numbers; an instant or a date plus an interval; a date plus days). */
    public static Object add(Object a, Object b) {
        if (a == null || b == null) {
            return null;
        }
        if (b instanceof Interval i) {
            return i.addedTo(a, 1);
        }
        if (a instanceof Interval i) {
            return i.addedTo(b, 1);
        }
        if (a instanceof LocalDate d && integral(b)) {
            return d.plusDays(((Number) b).longValue());
        }
        return arith(a, b, '+');
    }

    /** {@code a - b} (numbers; an instant minus an interval; a date minus a date is days). */
    public static Object sub(Object a, Object b) {
        if (a == null || b == null) {
            return null;
        }
        if (b instanceof Interval i) {
            return i.addedTo(a, -1);
        }
        if (a instanceof LocalDate x && b instanceof LocalDate y) {
            return ChronoUnit.DAYS.between(y, x);
        }
        if (a instanceof LocalDate d && integral(b)) {
            return d.minusDays(((Number) b).longValue());
        }
        if (a instanceof Instant x && b instanceof Instant y) {
            long us = ChronoUnit.MICROS.between(y, x);
            return new Interval(0, us / 86_400_000_000L, us % 86_400_000_000L);
        }
        if (a instanceof LocalDateTime x && b instanceof LocalDateTime y) {
            long us = ChronoUnit.MICROS.between(y, x);
            return new Interval(0, us / 86_400_000_000L, us % 86_400_000_000L);
        }
        return arith(a, b, '-');
    }

    /** {@code a * b}. */
    public static Object mul(Object a, Object b) {
        return a == null || b == null ? null : arith(a, b, '*');
    }

    /** {@code a / b}: integers truncate toward zero, as Postgres divides them. */
    public static Object div(Object a, Object b) {
        if (a == null || b == null) {
            return null;
        }
        if (decimal(b).signum() == 0) {
            throw new ArithmeticException("division by zero");
        }
        if (integral(a) && integral(b)) {
            return integer(big(a).divide(big(b)));
        }
        if (floating(a) || floating(b)) {
            return ((Number) a).doubleValue() / ((Number) b).doubleValue();
        }
        return decimal(a).divide(decimal(b), java.math.MathContext.DECIMAL128);
    }

    /** {@code a % b}: the sign of the dividend, as Postgres computes it. */
    public static Object mod(Object a, Object b) {
        if (a == null || b == null) {
            return null;
        }
        if (integral(a) && integral(b)) {
            return integer(big(a).remainder(big(b)));
        }
        return decimal(a).remainder(decimal(b));
    }

    /** {@code a || b} (NULL when either is). */
    public static String concat(Object a, Object b) {
        return a == null || b == null ? null : text(a) + text(b);
    }

    // ------------------------------------------------------------ intervals

    /** Postgres' interval: months, days and microseconds kept apart ({@code 1 month} is not 30 days). */
    public record Interval(long months, long days, long micros) {
        long approxMicros() {
            return (months * 30 + days) * 86_400_000_000L + micros;
        }

        /** {@code v + sign * this}: months first (clamped to the month's end), then days, then micros. */
        public Object addedTo(Object v, int sign) {
            if (v instanceof Instant i) {
                LocalDateTime t = LocalDateTime.ofInstant(i, UTC);
                return ((LocalDateTime) addedTo(t, sign)).toInstant(ZoneOffset.UTC);
            }
            if (v instanceof LocalDateTime t) {
                return t.plusMonths(sign * months).plusDays(sign * days).plus(sign * micros, ChronoUnit.MICROS);
            }
            if (v instanceof LocalDate d) {
                return addedTo(d.atStartOfDay(), sign);
            }
            throw new IllegalArgumentException("an interval added to " + v);
        }
    }

    private static final Map<String, long[]> UNITS = new HashMap<>();

    static {
        long[][] values = {{12000, 0, 0}, {1200, 0, 0}, {120, 0, 0}, {12, 0, 0}, {1, 0, 0}, {1, 0, 0},
            {0, 7, 0}, {0, 1, 0}, {0, 0, 3_600_000_000L}, {0, 0, 60_000_000L}, {0, 0, 60_000_000L},
            {0, 0, 1_000_000L}, {0, 0, 1_000_000L}, {0, 0, 1_000L}, {0, 0, 1_000L}, {0, 0, 1}, {0, 0, 1}};
        String[] names = {"millennium", "century", "decade", "year", "mon", "month", "week", "day", "hour",
            "minute", "min", "second", "sec", "millisecond", "msec", "microsecond", "usec"};
        for (int i = 0; i < names.length; i++) {
            UNITS.put(names[i], values[i]);
        }
        String[][] abbreviations = {{"y", "year"}, {"yr", "year"}, {"d", "day"}, {"h", "hour"}, {"hr", "hour"},
            {"m", "minute"}, {"s", "second"}, {"ms", "msec"}, {"us", "usec"}};
        for (String[] a : abbreviations) {
            UNITS.put(a[0], UNITS.get(a[1]));
        }
    }

    private static final Pattern INTERVAL_TOKEN = Pattern.compile(
        "\\s*(?:(?<clock>[+-]?\\d+:\\d+(?::\\d+(?:\\.\\d+)?)?)|(?<n>[+-]?\\d+(?:\\.\\d+)?)\\s*(?<unit>[a-z]+))");

    /** An interval written as Postgres reads or writes it ({@code 14 days}, {@code 1 year 2 mons -3 days +04:05:06.5}). */
    public static Interval intervalFromText(String s) {
        String text = s.strip().toLowerCase(Locale.ROOT);
        if (text.startsWith("@")) {
            text = text.substring(1).strip();
        }
        int sign = 1;
        if (text.endsWith(" ago")) {
            sign = -1;
            text = text.substring(0, text.length() - 4);
        }
        long months = 0;
        long days = 0;
        BigDecimal micros = BigDecimal.ZERO;
        java.util.regex.Matcher m = INTERVAL_TOKEN.matcher(text);
        int pos = 0;
        while (pos < text.length()) {
            if (!m.find(pos) || m.start() != pos) {
                throw new IllegalArgumentException("an interval " + s);
            }
            pos = m.end();
            if (m.group("clock") != null) {
                micros = micros.add(clockMicros(m.group("clock")));
                continue;
            }
            String unit = m.group("unit");
            long[] u = UNITS.get(unit);
            if (u == null && unit.endsWith("s")) {
                u = UNITS.get(unit.substring(0, unit.length() - 1));
            }
            if (u == null) {
                throw new IllegalArgumentException("an interval " + s + ": unit " + unit);
            }
            BigDecimal n = new BigDecimal(m.group("n"));
            BigDecimal monthsPart = n.multiply(BigDecimal.valueOf(u[0]));
            long wholeMonths = monthsPart.longValue();
            BigDecimal daysPart = n.multiply(BigDecimal.valueOf(u[1]))
                .add(monthsPart.subtract(BigDecimal.valueOf(wholeMonths)).multiply(BigDecimal.valueOf(30)));
            long wholeDays = daysPart.longValue();
            months += wholeMonths;
            days += wholeDays;
            micros = micros.add(n.multiply(BigDecimal.valueOf(u[2])))
                .add(daysPart.subtract(BigDecimal.valueOf(wholeDays)).multiply(BigDecimal.valueOf(86_400_000_000L)));
        }
        long us = micros.setScale(0, RoundingMode.HALF_EVEN).longValueExact();
        return new Interval(sign * months, sign * days, sign * us);
    }

    private static BigDecimal clockMicros(String clock) {
        boolean negative = clock.startsWith("-");
        String[] parts = clock.replaceFirst("^[+-]", "").split(":");
        BigDecimal seconds = parts.length > 2 ? new BigDecimal(parts[2]) : BigDecimal.ZERO;
        BigDecimal total = BigDecimal.valueOf((Long.parseLong(parts[0]) * 3600 + Long.parseLong(parts[1]) * 60))
            .add(seconds).multiply(BigDecimal.valueOf(1_000_000));
        return negative ? total.negate() : total;
    }

    // ------------------------------------------------------------ functions

    /** A value as Postgres' text output writes it (what {@code ||} and a cast to text give). */
    public static String text(Object v) {
        if (v instanceof Boolean b) {
            return b ? "true" : "false";
        }
        if (v instanceof Instant i) {
            return iso(LocalDateTime.ofInstant(i, UTC)).replace('T', ' ') + "+00:00";
        }
        if (v instanceof LocalDateTime t) {
            return iso(t).replace('T', ' ');
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString();
        }
        return String.valueOf(v);
    }

    /** {@code lower(text)}. */
    public static String lower(Object v) {
        return v == null ? null : v.toString().toLowerCase(Locale.ROOT);
    }

    /** {@code upper(text)}. */
    public static String upper(Object v) {
        return v == null ? null : v.toString().toUpperCase(Locale.ROOT);
    }

    /** {@code length(text)} in characters. */
    public static Long length(Object v) {
        return v == null ? null : (long) v.toString().codePointCount(0, v.toString().length());
    }

    /** {@code btrim(text)}: spaces off both ends. */
    public static String btrim(Object v) {
        return v == null ? null : v.toString().replaceAll("^ +| +$", "");
    }

    /** {@code substr(text, from [, count])}, 1-based; a start before 1 eats into the count. */
    public static String substr(Object v, Object start, Object count) {
        if (v == null || start == null) {
            return null;
        }
        int[] cps = v.toString().codePoints().toArray();
        long s = ((Number) start).longValue();
        long lo = Math.max(s, 1) - 1;
        long hi = count == null ? cps.length : Math.max(s + ((Number) count).longValue() - 1, lo);
        lo = Math.min(lo, cps.length);
        hi = Math.min(hi, cps.length);
        return new String(cps, (int) lo, (int) (hi - lo));
    }

    /** {@code substr(text, from)}. */
    public static String substr(Object v, Object start) {
        return substr(v, start, null);
    }

    /** {@code abs(n)}. */
    public static Object abs(Object v) {
        if (v == null) {
            return null;
        }
        return decimal(v).signum() < 0 ? neg(v) : v;
    }

    /** {@code round(n [, digits])}: half away from zero. */
    public static Object round(Object v, Object digits) {
        if (v == null || digits == null) {
            return null;
        }
        BigDecimal r = decimal(v).setScale((int) ((Number) digits).longValue(), RoundingMode.HALF_UP);
        return floating(v) ? (Object) r.doubleValue() : r;
    }

    /** {@code round(n)}. */
    public static Object round(Object v) {
        return round(v, 0L);
    }

    /** {@code floor(n)}. */
    public static Object floor(Object v) {
        if (v == null || integral(v)) {
            return v;
        }
        return floating(v) ? (Object) Math.floor(((Number) v).doubleValue()) : decimal(v).setScale(0, RoundingMode.FLOOR);
    }

    /** {@code ceil(n)}. */
    public static Object ceil(Object v) {
        if (v == null || integral(v)) {
            return v;
        }
        return floating(v) ? (Object) Math.ceil(((Number) v).doubleValue()) : decimal(v).setScale(0, RoundingMode.CEILING);
    }

    /** {@code coalesce(a, b, …)}: the first value that is not NULL. */
    public static Object coalesce(Object[] args) {
        for (Object a : args) {
            if (a != null) {
                return a;
            }
        }
        return null;
    }

    /** {@code nullif(a, b)}. */
    public static Object nullif(Object a, Object b) {
        return isTrue(compare("eq", a, b)) ? null : a;
    }

    /** {@code greatest(a, b, …)} (NULLs ignored). */
    public static Object greatest(Object[] args) {
        Object best = null;
        for (Object a : args) {
            if (a != null && (best == null || order(a, best) > 0)) {
                best = a;
            }
        }
        return best;
    }

    /** {@code least(a, b, …)} (NULLs ignored). */
    public static Object least(Object[] args) {
        Object best = null;
        for (Object a : args) {
            if (a != null && (best == null || order(a, best) < 0)) {
                best = a;
            }
        }
        return best;
    }

    private static final List<String> TRUNC = List.of("microseconds", "milliseconds", "second", "minute", "hour",
        "day", "week", "month", "quarter", "year");

    /** {@code date_trunc('unit', v)}: an instant is truncated on the calendar of {@code zone}. */
    public static Object dateTrunc(Object unit, Object v, ZoneId zone) {
        if (unit == null || v == null) {
            return null;
        }
        String u = unit.toString().toLowerCase(Locale.ROOT);
        int keep = TRUNC.indexOf(u);
        if (keep < 0) {
            throw new IllegalArgumentException("date_trunc unit " + unit);
        }
        boolean aware = v instanceof Instant;
        LocalDateTime t = aware ? LocalDateTime.ofInstant((Instant) v, zone)
            : v instanceof LocalDate d ? d.atStartOfDay() : (LocalDateTime) v;
        if (u.equals("milliseconds")) {
            t = t.truncatedTo(ChronoUnit.MILLIS);
        }
        if (keep >= TRUNC.indexOf("second")) {
            t = t.withNano(0);
        }
        if (keep >= TRUNC.indexOf("minute")) {
            t = t.withSecond(0);
        }
        if (keep >= TRUNC.indexOf("hour")) {
            t = t.withMinute(0);
        }
        if (keep >= TRUNC.indexOf("day")) {
            t = t.withHour(0);
        }
        if (u.equals("week")) {
            t = t.with(DayOfWeek.MONDAY);
        }
        if (keep >= TRUNC.indexOf("month")) {
            t = t.withDayOfMonth(1);
        }
        if (u.equals("quarter")) {
            t = t.withMonth((t.getMonthValue() - 1) / 3 * 3 + 1);
        }
        if (u.equals("year")) {
            t = t.withMonth(1);
        }
        return aware ? t.atZone(zone).toInstant() : t;
    }

    /** {@code EXTRACT(field FROM v)} (numeric): an instant is read on the calendar of {@code zone}. */
    public static BigDecimal datePart(Object field, Object v, ZoneId zone) {
        if (field == null || v == null) {
            return null;
        }
        LocalDateTime t = v instanceof Instant i ? LocalDateTime.ofInstant(i, zone)
            : v instanceof LocalDate d ? d.atStartOfDay() : (LocalDateTime) v;
        long n = switch (field.toString().toLowerCase(Locale.ROOT)) {
            case "year" -> t.getYear();
            case "month" -> t.getMonthValue();
            case "day" -> t.getDayOfMonth();
            case "hour" -> t.getHour();
            case "minute" -> t.getMinute();
            case "dow" -> t.getDayOfWeek().getValue() % 7;
            case "isodow" -> t.getDayOfWeek().getValue();
            case "doy" -> t.getDayOfYear();
            case "quarter" -> (t.getMonthValue() - 1) / 3 + 1;
            case "second" -> -1;
            case "epoch" -> -2;
            default -> throw new IllegalArgumentException("EXTRACT field " + field);
        };
        if (n == -1) {
            return BigDecimal.valueOf(t.getSecond()).add(BigDecimal.valueOf(t.getNano() / 1000, 6));
        }
        if (n == -2) {
            Long us = epochMicros(v, zone);
            return BigDecimal.valueOf(us == null ? 0 : us, 6);
        }
        return BigDecimal.valueOf(n);
    }

    // ------------------------------------------------------------ casts

    /** {@code CAST(v AS to)}, {@code to} as Postgres names the type, on the calendar of {@code zone}. */
    public static Object cast(Object v, String to, ZoneId zone) {
        if (v == null) {
            return null;
        }
        switch (to) {
            case "smallint", "integer", "bigint":
                return integral(v) ? (Object) big(v).longValueExact()
                    : decimal(v).setScale(0, RoundingMode.HALF_UP).longValueExact();
            case "numeric":
                return floating(v) ? new BigDecimal(v.toString()) : decimal(v);
            case "real", "double precision":
                return v instanceof Number n ? n.doubleValue() : Double.parseDouble(v.toString());
            case "text":
                return text(v);
            case "boolean":
                return v instanceof Boolean ? v : List.of("t", "true", "y", "yes", "on", "1")
                    .contains(v.toString().strip().toLowerCase(Locale.ROOT));
            case "uuid":
                return v instanceof UUID ? v : UUID.fromString(v.toString());
            case "date":
                if (v instanceof Instant i) {
                    return LocalDateTime.ofInstant(i, zone).toLocalDate();
                }
                if (v instanceof LocalDateTime t) {
                    return t.toLocalDate();
                }
                return v instanceof LocalDate ? v : LocalDate.parse(v.toString());
            case "timestamptz":
                if (v instanceof LocalDateTime t) {
                    return t.atZone(zone).toInstant();
                }
                if (v instanceof LocalDate d) {
                    return d.atStartOfDay(zone).toInstant();
                }
                return v instanceof Instant ? v : timestamptzFromText(v.toString(), zone);
            case "timestamp":
                if (v instanceof Instant i) {
                    return LocalDateTime.ofInstant(i, zone);
                }
                if (v instanceof LocalDate d) {
                    return d.atStartOfDay();
                }
                return v instanceof LocalDateTime ? v : timestampFromText(v.toString());
            case "interval":
                return v instanceof Interval ? v : intervalFromText(v.toString());
            case "time":
                return v instanceof LocalTime ? v : LocalTime.parse(v.toString());
            case "jsonb":
                return text(v);
            default:
                throw new IllegalArgumentException("CAST of " + v + " to " + to);
        }
    }

    /** An instant written as ISO 8601; without an offset it is read in {@code zone}. */
    public static Instant timestamptzFromText(String s, ZoneId zone) {
        String t = s.strip().replace(' ', 'T');
        if (t.endsWith("Z") || t.matches(".*T.*[+-]\\d\\d(:?\\d\\d)?$")) {
            return OffsetDateTime.parse(t.length() > 3 && t.matches(".*[+-]\\d\\d$") ? t + ":00" : t).toInstant();
        }
        if (!t.contains("T")) {
            return LocalDate.parse(t).atStartOfDay(zone).toInstant();
        }
        return LocalDateTime.parse(t).atZone(zone).toInstant();
    }

    /** A timestamp without time zone written as ISO 8601 (a space or a {@code T} between). */
    public static LocalDateTime timestampFromText(String s) {
        String t = s.strip().replace(' ', 'T');
        return t.contains("T") ? LocalDateTime.parse(t) : LocalDate.parse(t).atStartOfDay();
    }

    /** Bytes written in hex. */
    public static ByteBuffer hex(String s) {
        String h = s.startsWith("\\x") ? s.substring(2) : s;
        byte[] out = new byte[h.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
        }
        return ByteBuffer.wrap(out);
    }

    // ------------------------------------------------------------ stored forms

    /**
     * An instant as microseconds since 1970-01-01 00:00 UTC (a timestamp without time zone read
     * as UTC; a date its midnight in {@code zone}): the bind of an {@code epoch_micros} column.
     */
    public static Long epochMicros(Object v, ZoneId zone) {
        if (v == null) {
            return null;
        }
        Instant i = v instanceof Instant x ? x : v instanceof LocalDateTime t ? t.toInstant(ZoneOffset.UTC)
            : ((LocalDate) v).atStartOfDay(zone).toInstant();
        return Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000L), i.getNano() / 1000);
    }

    /** What an {@code epoch_micros_null_last} column stores for NULL (the largest bigint). */
    public static final long NULL_MICROS = Long.MAX_VALUE;

    /** The bind of an {@code epoch_micros_null_last} column: NULL as {@link #NULL_MICROS}. */
    public static Long epochMicrosNullLast(Object v, ZoneId zone) {
        Long us = epochMicros(v, zone);
        return us == null ? NULL_MICROS : us;
    }

    /** What a column whose encoding ends in {@code _null_first} stores for NULL (the smallest bigint). */
    public static final long NULL_FIRST = Long.MIN_VALUE;

    /**
     * The bind of a key column kept as a bigint that stores NULL ({@code encoding}: {@code
     * epoch_micros_}, {@code integer_} or {@code epoch_days_} with {@code null_last} or {@code
     * null_first}): the value in that form, NULL as the largest (smallest) bigint, a value equal
     * to it one nearer the others.
     */
    public static long encoded(Object v, String encoding, ZoneId zone) {
        Long plain;
        if (v == null) {
            plain = null;
        } else if (encoding.startsWith("epoch_micros")) {
            plain = epochMicros(v, zone);
        } else if (encoding.startsWith("epoch_days")) {
            plain = ((LocalDate) v).toEpochDay();
        } else {
            plain = ((Number) v).longValue();
        }
        boolean last = encoding.endsWith("_null_last");
        long nul = last ? NULL_MICROS : NULL_FIRST;
        if (plain == null) {
            return nul;
        }
        if (plain == nul) {
            return last ? plain - 1 : plain + 1;
        }
        return plain;
    }

    /** A stored {@code epoch_micros} bigint back to its instant (or its UTC wall time). */
    public static Object fromEpochMicros(Object v, boolean aware) {
        if (v == null) {
            return null;
        }
        long us = ((Number) v).longValue();
        Instant i = Instant.ofEpochSecond(Math.floorDiv(us, 1_000_000L), Math.floorMod(us, 1_000_000L) * 1000);
        return aware ? i : LocalDateTime.ofInstant(i, UTC);
    }

    /** A stored value as the source's, by its decoder's name ({@code null}: as the driver returns it). */
    public static Object decode(String decoder, Object v) {
        if (decoder == null || v == null) {
            return v;
        }
        return switch (decoder) {
            case "epoch_micros_tz" -> fromEpochMicros(v, true);
            case "epoch_micros_naive" -> fromEpochMicros(v, false);
            case "epoch_micros_null_last_tz" -> ((Number) v).longValue() == NULL_MICROS ? null : fromEpochMicros(v, true);
            case "epoch_micros_null_last_naive" -> ((Number) v).longValue() == NULL_MICROS ? null : fromEpochMicros(v, false);
            case "epoch_micros_null_first_tz" -> ((Number) v).longValue() == NULL_FIRST ? null : fromEpochMicros(v, true);
            case "epoch_micros_null_first_naive" -> ((Number) v).longValue() == NULL_FIRST ? null : fromEpochMicros(v, false);
            case "integer_null_last" -> ((Number) v).longValue() == NULL_MICROS ? null : v;
            case "integer_null_first" -> ((Number) v).longValue() == NULL_FIRST ? null : v;
            case "epoch_days_null_last" -> ((Number) v).longValue() == NULL_MICROS ? null : LocalDate.ofEpochDay(((Number) v).longValue());
            case "epoch_days_null_first" -> ((Number) v).longValue() == NULL_FIRST ? null : LocalDate.ofEpochDay(((Number) v).longValue());
            case "timestamp_tz" -> v;
            case "timestamp_naive" -> LocalDateTime.ofInstant((Instant) v, UTC);
            default -> v;
        };
    }

    /** A LIMIT's {@code ?} (CQL int): NULL is no limit. */
    public static Integer limitBind(Long v) {
        return v == null ? Integer.MAX_VALUE : (int) Math.min(v, Integer.MAX_VALUE);
    }

    // ------------------------------------------------------------ buckets and TTLs

    /**
     * The bucket {@code v} falls in, cut in {@code zone}: a date for {@code day} and {@code month}
     * (the month's first day), the hour's first instant for {@code hour}. A timestamp without time
     * zone (or a date) is read as its wall clock in UTC, as the backfill stores it.
     */
    public static Object bucket(Object v, String width, ZoneId zone) {
        if (v == null) {
            return null;
        }
        Instant i = v instanceof Instant x ? x : v instanceof LocalDateTime t ? t.toInstant(ZoneOffset.UTC)
            : v instanceof LocalDate d ? d.atStartOfDay(UTC).toInstant() : null;
        if (i == null) {
            throw new IllegalArgumentException("a bucket of " + v + ", which is no time");
        }
        ZonedDateTime local = i.atZone(zone);
        return switch (width) {
            case "day" -> local.toLocalDate();
            case "month" -> local.toLocalDate().withDayOfMonth(1);
            case "hour" -> local.truncatedTo(ChronoUnit.HOURS).toInstant();
            default -> throw new IllegalArgumentException("bucket width " + width);
        };
    }

    private static Instant bucketStart(Object b, ZoneId zone) {
        return b instanceof Instant i ? i : ((LocalDate) b).atStartOfDay(zone).toInstant();
    }

    private static Object nextBucket(Object b, String width, ZoneId zone) {
        return switch (width) {
            case "day" -> ((LocalDate) b).plusDays(1);
            case "month" -> ((LocalDate) b).plusMonths(1);
            default -> ((Instant) b).atZone(zone).plusHours(1).toInstant();
        };
    }

    /**
     * Every bucket from the one {@code lower} falls in to the one {@code upper} falls in,
     * ascending; with {@code upperExclusive}, not the upper one when {@code upper} is its first
     * instant. None when a bound is NULL (the window holds no row).
     */
    public static List<Object> buckets(Object lower, Object upper, String width, ZoneId zone, boolean upperExclusive) {
        Object first = bucket(lower, width, zone);
        Object last = bucket(upper, width, zone);
        List<Object> out = new ArrayList<>();
        if (first == null || last == null) {
            return out;
        }
        Instant end = bucketStart(last, zone);
        boolean dropLast = false;
        if (upperExclusive) {
            Instant hi = upper instanceof Instant x ? x : upper instanceof LocalDateTime t ? t.toInstant(ZoneOffset.UTC)
                : bucketStart(upper, zone);
            dropLast = end.equals(hi);
        }
        Object x = first;
        while (dropLast ? bucketStart(x, zone).isBefore(end) : !bucketStart(x, zone).isAfter(end)) {
            out.add(x);
            x = nextBucket(x, width, zone);
        }
        return out;
    }

    /**
     * A row's TTL: whole seconds from {@code now} until {@code instant}, rounded up, at least
     * {@code least}; 0 (CQL's no TTL) for NULL or beyond {@code most}.
     */
    public static Long secondsUntil(Object instant, Instant now, long least, long most) {
        if (instant == null) {
            return 0L;
        }
        Instant i = instant instanceof Instant x ? x : instant instanceof LocalDateTime t ? t.toInstant(ZoneOffset.UTC) : null;
        if (i == null) {
            throw new IllegalArgumentException("a TTL until " + instant + ", which is no timestamp");
        }
        long us = ChronoUnit.MICROS.between(now, i);
        long secs = Math.floorDiv(us + 999_999, 1_000_000L);
        return secs > most ? 0L : Math.max(secs, least);
    }

    // ------------------------------------------------------------ the client's work

    /** An OFFSET or LIMIT (NULL: none). */
    public static Long count(Object v) {
        return v == null ? null : Math.max(decimal(v).longValue(), 0);
    }

    /** The rows kept by a filter. */
    public static List<Map<String, Object>> filter(List<Map<String, Object>> rows, Predicate<Map<String, Object>> keep) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            if (keep.test(r)) {
                out.add(r);
            }
        }
        return out;
    }

    /** The rows from {@code skip} on, at most {@code keep} of them. */
    public static List<Map<String, Object>> slice(List<Map<String, Object>> rows, Long skip, Long keep) {
        int from = skip == null ? 0 : (int) Math.min(skip, rows.size());
        int to = keep == null ? rows.size() : (int) Math.min(rows.size(), from + keep);
        return new ArrayList<>(rows.subList(from, to));
    }

    /** A row joined with the row a lookup found. */
    public static Map<String, Object> merge(Map<String, Object> a, Map<String, Object> b) {
        Map<String, Object> out = new HashMap<>(a);
        out.putAll(b);
        return out;
    }

    /** A sort key: the field, descending, NULLs first. */
    public record SortKey(String field, boolean desc, boolean nullsFirst) {}

    /**
     * Rows sorted by keys, the first deciding (stable: rows equal on every key keep their order,
     * which SQL leaves free).
     */
    public static List<Map<String, Object>> sortRows(List<Map<String, Object>> rows, List<SortKey> keys) {
        List<Map<String, Object>> out = new ArrayList<>(rows);
        Comparator<Map<String, Object>> by = (a, b) -> 0;
        for (SortKey k : keys) {
            Comparator<Map<String, Object>> one = (a, b) -> {
                Object x = a.get(k.field());
                Object y = b.get(k.field());
                if (x == null || y == null) {
                    int c = Boolean.compare(x == null, y == null);
                    return k.nullsFirst() ? -c : c;
                }
                int c = order(x, y);
                return k.desc() ? -c : c;
            };
            by = by.thenComparing(one);
        }
        out.sort(by);
        return out;
    }

    /** One row of each set of equal rows, the first. */
    public static List<Map<String, Object>> distinct(List<Map<String, Object>> rows) {
        Set<Map<String, Object>> seen = new HashSet<>();
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            if (seen.add(r)) {
                out.add(r);
            }
        }
        return out;
    }

    /** An aggregate the client computes: its field, function, column (null: {@code *}), DISTINCT. */
    public record Agg(String field, String function, String column, boolean distinct) {}

    /**
     * One row per group of equal {@code by} values (NULLs one group; no {@code by}: one row, also
     * for no rows), each aggregate computed over it; {@code whole} keeps a group's first row whole.
     */
    public static List<Map<String, Object>> group(List<Map<String, Object>> rows, List<String> by, List<Agg> aggs,
            boolean whole) {
        Map<List<Object>, List<Map<String, Object>>> groups = new LinkedHashMap<>();
        for (Map<String, Object> r : rows) {
            List<Object> k = new ArrayList<>();
            for (String f : by) {
                k.add(groupKey(r.get(f)));
            }
            groups.computeIfAbsent(k, x -> new ArrayList<>()).add(r);
        }
        if (groups.isEmpty() && by.isEmpty()) {
            groups.put(List.of(), new ArrayList<>());
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (List<Map<String, Object>> members : groups.values()) {
            Map<String, Object> g = whole && !members.isEmpty() ? new HashMap<>(members.get(0)) : new HashMap<>();
            for (String f : by) {
                g.put(f, members.isEmpty() ? null : members.get(0).get(f));
            }
            for (Agg a : aggs) {
                g.put(a.field(), aggregate(a.function(), a.column(), a.distinct(), members));
            }
            out.add(g);
        }
        return out;
    }

    private static Object groupKey(Object v) {
        return v instanceof Number && !floating(v) ? decimal(v).stripTrailingZeros() : v;
    }

    /** {@code count}, {@code sum}, {@code min}, {@code max} or {@code avg} of {@code column} over {@code rows}. */
    public static Object aggregate(String function, String column, boolean distinct, List<Map<String, Object>> rows) {
        if (column == null) {
            if (!function.equals("count")) {
                throw new IllegalArgumentException(function + "(*)");
            }
            return (long) rows.size();
        }
        List<Object> present = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            Object v = r.get(column);
            if (v == null) {
                continue;
            }
            if (distinct && present.stream().anyMatch(u -> isTrue(compare("eq", v, u)))) {
                continue;
            }
            present.add(v);
        }
        if (function.equals("count")) {
            return (long) present.size();
        }
        if (present.isEmpty()) {
            return null;
        }
        switch (function) {
            case "sum": {
                Object total = present.get(0);
                for (Object v : present.subList(1, present.size())) {
                    total = add(total, v);
                }
                return total;
            }
            case "min":
                return least(present.toArray());
            case "max":
                return greatest(present.toArray());
            case "avg": {
                BigDecimal total = BigDecimal.ZERO;
                for (Object v : present) {
                    total = total.add(decimal(v));
                }
                return total.divide(BigDecimal.valueOf(present.size()), java.math.MathContext.DECIMAL128);
            }
            default:
                throw new IllegalArgumentException("aggregate " + function);
        }
    }

    /**
     * A counter table's rows as the read's result: a group whose count is 0 has no source row
     * (dropped); without GROUP BY and no group left, one row of count 0 and NULL sums.
     */
    public static List<Map<String, Object>> counterRows(List<Map<String, Object>> rows, String countKey,
            boolean grouped, List<String> keys) {
        List<Map<String, Object>> out = filter(rows, r -> r.get(countKey) != null && decimal(r.get(countKey)).signum() != 0);
        if (!out.isEmpty() || grouped) {
            return out;
        }
        Map<String, Object> one = new HashMap<>();
        for (String k : keys) {
            one.put(k, k.equals(countKey) ? (Object) 0L : null);
        }
        out.add(one);
        return out;
    }

    /**
     * The rows of an embedded child table read from the {@code collection} of each row: one per
     * entry (a map's values, a list's items), the entry type's i-th field under
     * {@code fields.get(i)}, each pair ({@code child}, {@code parent}) of {@code linked} the
     * row's value of {@code parent}; an empty collection, none.
     */
    public static List<Map<String, Object>> unnest(List<Map<String, Object>> rows, String collection,
            List<String> fields, List<String> linked) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map<String, Object> r : rows) {
            Object c = r.get(collection);
            if (c == null) {
                continue;
            }
            Collection<?> entries = c instanceof Map<?, ?> m ? m.values() : (Collection<?>) c;
            for (Object e : entries) {
                Map<String, Object> child = new HashMap<>(r);
                List<Object> values = e instanceof Map<?, ?> m ? new ArrayList<>(m.values())
                    : e instanceof List<?> l ? new ArrayList<>(l) : List.of();
                for (int i = 0; i < fields.size(); i++) {
                    child.put(fields.get(i), i < values.size() ? values.get(i) : null);
                }
                for (int i = 0; i + 1 < linked.size(); i += 2) {
                    child.put(linked.get(i), r.get(linked.get(i + 1)));
                }
                out.add(child);
            }
        }
        return out;
    }

    /** An embedded child row as a collection entry (a user type's value), fields by name. */
    public static Map<String, Object> entry(Object[] kv) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            out.put(String.valueOf(kv[i]), kv[i + 1]);
        }
        return out;
    }

    /** A one-entry map {@code {key: value}}. */
    public static Map<Object, Object> entryOf(Object key, Object value) {
        Map<Object, Object> out = new LinkedHashMap<>();
        out.put(key, value);
        return out;
    }

    /** The value {@code row} holds for {@code key}; the plan states a value no read returned otherwise. */
    public static Object need(Map<String, Object> row, String key) {
        if (!row.containsKey(key)) {
            throw new NotExecutable(key + " is not in the rows read");
        }
        return row.get(key);
    }

    // ------------------------------------------------------------ typed results

    /** An integer result. */
    public static Long asLong(Object v) {
        return v == null ? null : v instanceof Long l ? l : decimal(v).longValueExact();
    }

    /** A numeric result. */
    public static BigDecimal asDecimal(Object v) {
        return v == null ? null : v instanceof BigDecimal d ? d : floating(v) ? new BigDecimal(v.toString()) : decimal(v);
    }

    /** A floating-point result. */
    public static Double asDouble(Object v) {
        return v == null ? null : ((Number) v).doubleValue();
    }

    /** A text result. */
    public static String asText(Object v) {
        return v == null ? null : v instanceof String s ? s : text(v);
    }

    /** A boolean result. */
    public static Boolean asBool(Object v) {
        return (Boolean) v;
    }

    /** A date result. */
    public static LocalDate asDate(Object v) {
        return (LocalDate) v;
    }

    /** A time result. */
    public static LocalTime asTime(Object v) {
        return (LocalTime) v;
    }

    /** A {@code timestamptz} result. */
    public static Instant asInstant(Object v) {
        return v instanceof LocalDateTime t ? t.toInstant(ZoneOffset.UTC) : (Instant) v;
    }

    /** A {@code timestamp} result (its UTC wall time). */
    public static LocalDateTime asTimestamp(Object v) {
        return v instanceof Instant i ? LocalDateTime.ofInstant(i, UTC) : (LocalDateTime) v;
    }

    /** An interval result. */
    public static Interval asInterval(Object v) {
        return (Interval) v;
    }

    /** A UUID result. */
    public static UUID asUuid(Object v) {
        return v == null ? null : v instanceof UUID u ? u : UUID.fromString(v.toString());
    }

    /** A bytes result. */
    public static ByteBuffer asBytes(Object v) {
        return (ByteBuffer) v;
    }

    /** A list parameter. */
    @SuppressWarnings("unchecked")
    public static <T> List<T> asList(Object v, Function<Object, T> item) {
        if (v == null) {
            return null;
        }
        List<T> out = new ArrayList<>();
        for (Object x : (List<Object>) v) {
            out.add(item.apply(x));
        }
        return out;
    }

    // ------------------------------------------------------------ write paths

    /**
     * The values one execution of a write path binds, as plan.json defines them.
     *
     * <p>{@code current(c)} is the written row's value before the write: from the row a
     * {@code for_each} statement runs for, else the statement's {@code WHERE c = …}, else the
     * first read before write (not of the new parent, not of many rows) that returned it.
     * {@code newValue(c)} is its value after: the {@code DO UPDATE SET} of an upsert that met its
     * row (else the row's own value), the statement's new value ({@code values}; NULL for an
     * INSERT that gives the column none), else the value a read of the new parent returned, else
     * the current value.
     */
    public static final class WriteState {
        private final boolean insert;
        private final Map<String, Object> key;
        /** The statement's new values, each of the row at hand. */
        public final Map<String, Function<Map<String, Object>, Object>> values = new HashMap<>();
        private final List<Object[]> reads = new ArrayList<>();
        /** The row of each named read step ({@code UPDATE … FROM t s}). */
        public final Map<String, Map<String, Object>> steps = new HashMap<>();
        /** The row an upsert met. */
        public Map<String, Object> existing;
        /** An upsert's {@code DO UPDATE SET}. */
        public Map<String, Function<Map<String, Object>, Object>> updateSet;

        /** The state of one execution. */
        public WriteState(boolean insert, Map<String, Object> key) {
            this.insert = insert;
            this.key = key;
        }

        /** Records the rows a read before write returned (after its filter). */
        public void read(List<Map<String, Object>> rows, boolean readsNew, boolean many) {
            reads.add(new Object[] {rows, readsNew, many});
        }

        @SuppressWarnings("unchecked")
        private static List<Map<String, Object>> rowsOf(Object[] read) {
            return (List<Map<String, Object>>) read[0];
        }

        /** {@code cur(column)}. */
        public Object current(String column, Map<String, Object> row) {
            if (row != null && row.containsKey(column)) {
                return row.get(column);
            }
            if (key.containsKey(column)) {
                return key.get(column);
            }
            for (Object[] r : reads) {
                List<Map<String, Object>> rows = rowsOf(r);
                if ((Boolean) r[1] || (Boolean) r[2] || rows.isEmpty()) {
                    continue;
                }
                if (rows.get(0).containsKey(column)) {
                    return rows.get(0).get(column);
                }
            }
            throw new NotExecutable("cur(" + column + "): no read before write returned it");
        }

        /** {@code new(column)}; {@code own} when the column is the written table's. */
        public Object newValue(String column, boolean own, Map<String, Object> row) {
            if (own && !values.isEmpty()) {
                if (existing != null && updateSet != null) {
                    Function<Map<String, Object>, Object> set = updateSet.get(column);
                    return set != null ? set.apply(existing) : existing.get(column);
                }
                Function<Map<String, Object>, Object> v = values.get(column);
                if (v != null) {
                    return v.apply(row);
                }
                if (insert) {
                    return null;
                }
            }
            for (Object[] r : reads) {
                List<Map<String, Object>> rows = rowsOf(r);
                if ((Boolean) r[1] && !rows.isEmpty() && rows.get(0).containsKey(column)) {
                    return rows.get(0).get(column);
                }
            }
            return current(column, row);
        }

        /** {@code EXCLUDED.column}: the value the upsert proposed (NULL when it gives none). */
        public Object excluded(String column) {
            Function<Map<String, Object>, Object> v = values.get(column);
            return v == null ? null : v.apply(null);
        }

        /** {@code row_id(table)}: the row's id, the one made for this call (an INSERT), else the one read first. */
        public Object rowId(String table, Object made, boolean own, Map<String, Object> row) {
            String k = "rowid:" + table;
            if (row != null && row.containsKey(k)) {
                return row.get(k);
            }
            if (insert && own) {
                return made;
            }
            for (Object[] r : reads) {
                List<Map<String, Object>> rows = rowsOf(r);
                if (!(Boolean) r[2] && !rows.isEmpty() && rows.get(0).containsKey(k)) {
                    return rows.get(0).get(k);
                }
            }
            throw new NotExecutable("row_id(" + table + "): no row read before holds it");
        }
    }

    /**
     * True when a key column's value moves: compared as the target holds it ({@code timestamp}:
     * CQL's milliseconds).
     */
    public static boolean changed(Object a, Object b, String stored) {
        if (stored.equals("timestamp")) {
            a = a == null ? null : asInstant(a).truncatedTo(ChronoUnit.MILLIS);
            b = b == null ? null : asInstant(b).truncatedTo(ChronoUnit.MILLIS);
        }
        if (a == null || b == null) {
            return (a == null) != (b == null);
        }
        return isTrue(compare("ne", a, b));
    }

    // ------------------------------------------------------------ JSON (the executor's protocol)

    /** A parameter as {@code remodel replay --executor} sends it (Postgres' {@code to_json} of the value). */
    public static Object fromJson(Object v, String ty) {
        if (v == null) {
            return null;
        }
        if (v instanceof List<?> l) {
            List<Object> out = new ArrayList<>();
            for (Object x : l) {
                out.add(fromJson(x, ty));
            }
            return out;
        }
        return switch (ty) {
            case "int" -> decimal(v).longValueExact();
            case "decimal" -> decimal(v);
            case "float" -> ((Number) (v instanceof Number ? v : Double.valueOf(v.toString()))).doubleValue();
            case "timestamptz" -> timestamptzFromText(v.toString(), UTC);
            case "timestamp" -> timestampFromText(v.toString());
            case "date" -> LocalDate.parse(v.toString());
            case "time" -> LocalTime.parse(v.toString());
            case "uuid" -> UUID.fromString(v.toString());
            case "bytes" -> hex(v.toString());
            case "interval" -> v instanceof Map<?, ?> m
                ? new Interval(asLong(m.get("months")), asLong(m.get("days")), asLong(m.get("micros")))
                : intervalFromText(v.toString());
            default -> v;
        };
    }

    private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS");

    private static String iso(LocalDateTime t) {
        return ISO.format(t);
    }

    /**
     * A result value as the executor answers it: numbers exact (a decimal as its text), instants
     * in ISO 8601 with their offset, bytes as {@code \x} hex.
     */
    public static Object toJson(Object v) {
        if (v == null || v instanceof Boolean || v instanceof String || v instanceof Long || v instanceof Integer
                || v instanceof Short || v instanceof Byte || v instanceof BigInteger) {
            return v;
        }
        if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            return Double.isFinite(d) ? (Object) d : String.valueOf(d);
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString();
        }
        if (v instanceof Instant i) {
            return iso(LocalDateTime.ofInstant(i, UTC)) + "+00:00";
        }
        if (v instanceof LocalDateTime t) {
            return iso(t);
        }
        if (v instanceof LocalDate || v instanceof UUID) {
            return v.toString();
        }
        if (v instanceof LocalTime t) {
            return DateTimeFormatter.ofPattern("HH:mm:ss.SSSSSS").format(t);
        }
        if (v instanceof ByteBuffer b) {
            StringBuilder s = new StringBuilder("\\x");
            ByteBuffer d = b.duplicate();
            while (d.hasRemaining()) {
                s.append(String.format("%02x", d.get()));
            }
            return s.toString();
        }
        if (v instanceof Interval i) {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("months", i.months());
            out.put("days", i.days());
            out.put("micros", i.micros());
            return out;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(toJson(k)), toJson(x)));
            return out;
        }
        if (v instanceof Collection<?> c) {
            List<Object> out = new ArrayList<>();
            c.forEach(x -> out.add(toJson(x)));
            return out;
        }
        return v.toString();
    }

}
