package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Bad session values against a real database's fence (issue 8): generated malformed {@code fencing.token} values
 * (PostgreSQL settings, MariaDB and H2 user variables, always set as strings) and lock values that are not the
 * table's lock beside a valid higher token. Every INSERT, UPDATE or DELETE fails with {@code FN002}, the row stays as
 * it was and the fence row stays at 50. Subclasses bring the database, one table fenced for {@link #LOCK} with the
 * fence at 50 and one row (id 1, amount 10), and a connection. Tries are few: each is a round trip to the database.
 */
abstract class BadSessionProperties {

  static final String LOCK = "ledger-bad-input";
  static final String TABLE = "bad_input_orders";
  static final long FENCE = 50;
  private static final Pattern TOKEN = Pattern.compile("[1-9][0-9]{0,18}");
  private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);

  /** The connection the tries share (autocommit). */
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

  @Property(tries = 50)
  void aMalformedTokenFailsEveryWriteWithFN002(@ForAll("malformed") String token, @ForAll("writes") int write)
      throws Exception {
    Connection c = connection();
    session(c, LOCK, token);
    assertRefused(c, write);
  }

  @Property(tries = 25)
  void aForeignOrMissingLockFailsWithFN002EvenWithAHigherToken(@ForAll("badLock") String lock,
      @ForAll("higher") long token, @ForAll("writes") int write) throws Exception {
    Connection c = connection();
    session(c, lock, Long.toString(token));
    assertRefused(c, write);
  }

  private void assertRefused(Connection c, int write) throws SQLException {
    assertThatThrownBy(() -> {
      switch (write) {
        case 0 -> FenceContractIT.insert(c, TABLE, 2, 20);
        case 1 -> FenceContractIT.update(c, TABLE, 1, 11);
        default -> FenceContractIT.delete(c, TABLE, 1);
      }
    }).satisfies(e -> FenceContractIT.assertState(e, SqlStates.MISSING_TOKEN));
    session(c, LOCK, null);
    assertThat(FenceContractIT.fenceToken(c, LOCK)).isEqualTo(FENCE);
    assertThat(FenceContractIT.amounts(c, TABLE)).containsExactly(10);
  }

  @Provide
  Arbitrary<Integer> writes() {
    return Arbitraries.integers().between(0, 2);
  }

  @Provide
  Arbitrary<Long> higher() {
    return Arbitraries.longs().between(FENCE + 1, Long.MAX_VALUE);
  }

  @Provide
  Arbitrary<String> malformed() {
    Arbitrary<String> digits = Arbitraries.longs().between(1, Long.MAX_VALUE).map(Object::toString);
    return Arbitraries.oneOf(
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(24),
        Arbitraries.longs().between(0, Long.MAX_VALUE).map(n -> "-" + n),
        Arbitraries.integers().between(1, 20).map("0"::repeat),
        digits.map(d -> "0" + d),
        digits.map(d -> "+" + d),
        Arbitraries.bigIntegers().between(MAX.add(BigInteger.ONE), new BigInteger("9".repeat(30)))
            .map(BigInteger::toString),
        Combinators.combine(digits, Arbitraries.of(" ", "\t", "\n", "\r", "\r\n", ".0", "e3", ",1", "x"),
            Arbitraries.of(true, false)).as((d, s, before) -> before ? s + d : d + s),
        Arbitraries.strings().withChars(' ', '\t', '\n').ofMinLength(1).ofMaxLength(5),
        Arbitraries.strings().withCharRange('\u0660', '\u0669').ofMinLength(1).ofMaxLength(19),
        Arbitraries.strings().withCharRange('\uff10', '\uff19').ofMinLength(1).ofMaxLength(19),
        Combinators.combine(digits, Arbitraries.of('\u0001', '\u001b', '\u007f', '\u00a0', '\u200b', '\ufeff'))
            .as((d, ch) -> d.substring(0, 1) + ch + d.substring(1)),
        Arbitraries.integers().between(65, 5000).map("9"::repeat))
        .filter(t -> !valid(t));
  }

  /** Session locks other than {@link #LOCK}: null (unset), empty, case or blank variants, look-alikes, others. */
  @Provide
  Arbitrary<String> badLock() {
    return Arbitraries.oneOf(
        Arbitraries.of(List.of("", " ", LOCK.toUpperCase(), " " + LOCK, LOCK + " ", LOCK + "\n", LOCK + ",x",
            "\u0435" + LOCK.substring(1), LOCK + "\u200b", "%", LOCK.substring(0, 5) + "%", "ledger")),
        Arbitraries.just((String) null),
        Arbitraries.strings().withCharRange('!', '~').ofMinLength(1).ofMaxLength(40),
        Arbitraries.strings().withCharRange('a', 'z').ofLength(200).map(s -> LOCK + s))
        .filter(l -> !LOCK.equals(l));
  }
}
