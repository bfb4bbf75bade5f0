package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fencing.protocol.SqlStates;
import dev.fencing.testing.Gen;
import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Bad session values against a real database's fence: generated malformed {@code fencing.token} values
 * (PostgreSQL settings, MariaDB and H2 user variables, always set as strings) and lock values that are not the
 * table's lock beside a valid higher token. Every INSERT, UPDATE or DELETE fails with {@code FN002}, the row stays as
 * it was and the fence row stays at 50. Subclasses bring the database, one table fenced for {@link #LOCK} with the
 * fence at 50 and one row (id 1, amount 10), and a connection. Cases come from a seeded {@link Gen} (the same on every
 * run and every database) plus hand-picked edge cases; they are few: each is a round trip to the database.
 */
abstract class BadSessionProperties {

  static final String LOCK = "ledger-bad-input";
  static final String TABLE = "bad_input_orders";
  static final long FENCE = 50;
  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  /** The connection the cases share (autocommit). */
  abstract Connection connection();

  /** Sets both session values as strings; null makes a value unset (NULL or empty, as the database has it). */
  abstract void session(Connection c, String lock, String token) throws SQLException;

  /** Creates {@link #TABLE}, installs the fence for {@link #LOCK} and writes row 1 with token 50. */
  void prepare(Connection c) throws SQLException {
    FenceContractIT.exec(c, "CREATE TABLE " + TABLE + " (id INT PRIMARY KEY, amount INT NOT NULL)");
    new SqlFenceInstaller(c).install(new SqlFence(TableName.parse(TABLE), LOCK, false, false));
    session(c, LOCK, Long.toString(FENCE));
    FenceContractIT.insert(c, TABLE, 1, 10);
  }

  /** The SQL fence's token rule, exactly: no blanks allowed around it. */
  static boolean valid(String token) {
    return TOKEN.matcher(token).matches() && new BigInteger(token).compareTo(MAX) <= 0;
  }

  @ParameterizedTest(name = "{0} on {1}")
  @MethodSource("malformedTokens")
  void aMalformedTokenFailsEveryWriteWithFN002(String token, Write write) throws Exception {
    Connection c = connection();
    session(c, LOCK, token);
    assertRefused(c, write);
  }

  @ParameterizedTest(name = "lock {0}, token {1}, {2}")
  @MethodSource("badLocksWithHigherToken")
  void aForeignOrMissingLockFailsWithFN002EvenWithAHigherToken(String lock, long token, Write write)
      throws Exception {
    Connection c = connection();
    session(c, lock, Long.toString(token));
    assertRefused(c, write);
  }

  /** The write each case tries. */
  enum Write { INSERT, UPDATE, DELETE }

  private void assertRefused(Connection c, Write write) throws SQLException {
    assertThatThrownBy(() -> {
      switch (write) {
        case INSERT -> FenceContractIT.insert(c, TABLE, 2, 20);
        case UPDATE -> FenceContractIT.update(c, TABLE, 1, 11);
        case DELETE -> FenceContractIT.delete(c, TABLE, 1);
        default -> throw new AssertionError(write);
      }
    }).satisfies(e -> FenceContractIT.assertState(e, SqlStates.MISSING_TOKEN));
    session(c, LOCK, null);
    assertThat(FenceContractIT.fenceToken(c, LOCK)).isEqualTo(FENCE);
    assertThat(FenceContractIT.amounts(c, TABLE)).containsExactly(10);
  }

  private static Named<String> named(String value) {
    return Named.of(Gen.show(value), value);
  }

  static String malformed(Gen g) {
    String t;
    do {
      t = g.oneOf(
          () -> g.chars('!', '~', 1, 24),
          () -> "-" + g.between(0, Long.MAX_VALUE),
          () -> "0".repeat(g.between(1, 20)),
          () -> "0" + g.validDigits(),
          () -> "+" + g.validDigits(),
          () -> g.between(MAX.add(BigInteger.ONE), new BigInteger("9".repeat(30))).toString(),
          () -> {
            String d = g.validDigits();
            String extra = g.of(" ", "\t", "\n", "\r", "\r\n", ".0", "e3", ",1", "x");
            return g.bool() ? extra + d : d + extra;
          },
          () -> g.charsOf(" \t\n", 1, 5),
          () -> g.chars('\u0660', '\u0669', 1, 19),
          () -> g.chars('\uff10', '\uff19', 1, 19),
          () -> {
            String d = g.validDigits();
            return d.substring(0, 1) + g.of('\u0001', '\u001b', '\u007f', '\u00a0', '\u200b', '\ufeff')
                + d.substring(1);
          },
          () -> "9".repeat(g.between(65, 5000)));
    } while (valid(t));
    return t;
  }

  static Stream<Arguments> malformedTokens() {
    Gen g = new Gen(7_001);
    List<String> tokens = Gen.cases(50, List.of("0", "-1", "+1", "01", " 51", "51 ", "9223372036854775808",
        "1e3", "\u0661", ""), () -> malformed(g), t -> !valid(t));
    List<Arguments> out = new ArrayList<>();
    for (String t : tokens) {
      out.add(Arguments.of(named(t), g.of(Write.values())));
    }
    return out.stream();
  }

  /** Session locks other than {@link #LOCK}: null (unset), empty, case or blank variants, look-alikes, others. */
  static String badLock(Gen g) {
    String l;
    do {
      l = g.oneOf(
          () -> g.of(List.of("", " ", LOCK.toUpperCase(), " " + LOCK, LOCK + " ", LOCK + "\n", LOCK + ",x",
              "\u0435" + LOCK.substring(1), LOCK + "\u200b", "%", LOCK.substring(0, 5) + "%", "ledger")),
          () -> null,
          () -> g.chars('!', '~', 1, 40),
          () -> LOCK + g.chars('a', 'z', 200, 200));
    } while (LOCK.equals(l));
    return l;
  }

  static Stream<Arguments> badLocksWithHigherToken() {
    Gen g = new Gen(7_002);
    List<String> locks = Gen.cases(25, java.util.Arrays.asList(null, "", LOCK.toUpperCase(), "%"), () -> badLock(g),
        l -> !LOCK.equals(l));
    List<Arguments> out = new ArrayList<>();
    for (String l : locks) {
      out.add(Arguments.of(named(l), g.between(FENCE + 1, Long.MAX_VALUE), g.of(Write.values())));
    }
    return out.stream();
  }
}
