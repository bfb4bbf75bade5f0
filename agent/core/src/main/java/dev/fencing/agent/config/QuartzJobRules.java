package dev.fencing.agent.config;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * fencing.quartz.jobs: which Quartz jobs run as scopes of which agent lock. Each entry is {@code <pattern>[@<lock>]};
 * a pattern matches a job's key ({@code group.name}, as Quartz prints a {@code JobKey}) or its job class's fully
 * qualified name, {@code *} standing for any run of characters. The first entry that matches decides; without
 * {@code @<lock>} the lock is named after the job key. Immutable.
 */
public final class QuartzJobRules {
  public static final QuartzJobRules NONE = new QuartzJobRules(List.of());
  static final String FORM = "<job key or job class pattern>[@<lock>] entries separated by commas, '*' for any run of "
      + "characters, e.g. reports.nightly,com.acme.jobs.*@ledger";
  private static final Pattern LOCK_NAME = Pattern.compile("[A-Za-z0-9._-]{1,128}");
  private static final Pattern PATTERN = Pattern.compile("[^\\s,@]+");

  private record Rule(String pattern, Pattern regex, String lock) {}

  private final List<Rule> rules;

  private QuartzJobRules(List<Rule> rules) {
    this.rules = rules;
  }

  /** Parses the value; an entry not of the form is an {@link IllegalArgumentException} naming it and the form. */
  public static QuartzJobRules parse(String value) {
    List<Rule> out = new ArrayList<>();
    for (String s : value.split(",")) {
      if (s.isBlank()) {
        continue;
      }
      String e = s.trim();
      int at = e.indexOf('@');
      String pattern = at < 0 ? e : e.substring(0, at);
      String lock = at < 0 ? null : e.substring(at + 1);
      if (!PATTERN.matcher(pattern).matches()) {
        throw new IllegalArgumentException("expected " + FORM + " ('" + e + "' is not one)");
      }
      if (lock != null && !LOCK_NAME.matcher(lock).matches()) {
        throw new IllegalArgumentException("expected " + FORM + " ('" + e + "': the lock '" + lock
            + "' is not 1 to 128 letters, digits, '.', '_' or '-')");
      }
      out.add(new Rule(pattern, glob(pattern), lock));
    }
    return out.isEmpty() ? NONE : new QuartzJobRules(List.copyOf(out));
  }

  private static Pattern glob(String pattern) {
    String[] parts = pattern.split("\\*", -1);
    StringBuilder regex = new StringBuilder();
    for (int i = 0; i < parts.length; i++) {
      regex.append(i > 0 ? ".*" : "").append(Pattern.quote(parts[i]));
    }
    return Pattern.compile(regex.toString(), Pattern.DOTALL);
  }

  public boolean isEmpty() {
    return rules.isEmpty();
  }

  /**
   * The name of the agent lock the job {@code jobKey} of class {@code jobClass} runs under, or null when no entry
   * matches it. A name the entry does not give is the job key, which the captured locks' registry maps to a lock
   * name.
   */
  public String lockFor(String jobKey, String jobClass) {
    for (Rule r : rules) {
      if (r.regex.matcher(jobKey).matches() || r.regex.matcher(jobClass).matches()) {
        return r.lock != null ? r.lock : jobKey;
      }
    }
    return null;
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder();
    for (Rule r : rules) {
      b.append(b.length() == 0 ? "" : ",").append(r.pattern).append(r.lock == null ? "" : "@" + r.lock);
    }
    return b.toString();
  }
}
