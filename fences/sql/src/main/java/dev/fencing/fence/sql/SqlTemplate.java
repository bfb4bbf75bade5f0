package dev.fencing.fence.sql;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The SQL of the fence, kept in resource files under {@code dev/fencing/fence/sql/<dialect>/} so that a DBA reviews
 * it as SQL. A file holds named sections:
 *
 * <pre>
 * -- Text outside sections is commentary for the reader (SQL comments and blank lines only).
 * -- @section seed
 * INSERT INTO ${schema}fencing_fence (lock_name, token, updated_at) VALUES (${lock}, 0, NULL)
 * -- @end
 * </pre>
 *
 * A section is rendered verbatim, lines joined by {@code \n}, with each {@code ${name}} replaced by its value. A
 * parameter alone on its line (after spaces) is a block: each line of the value is indented like the placeholder,
 * and an empty value removes the line. Values are SQL already: identifiers quoted and literals built by the caller
 * ({@link SqlFenceDdl}), never escaped here. A parameter the section uses but the caller did not pass, or one the
 * caller passed but the section does not use, is an error, as is an unknown section: a template and its caller
 * that disagree fail loudly instead of rendering wrong SQL.
 */
final class SqlTemplate {

  private static final Pattern SECTION = Pattern.compile("-- @section ([a-z][a-z0-9_]*)");
  private static final String END = "-- @end";
  private static final Pattern BLOCK = Pattern.compile("( *)\\$\\{([a-z][a-z0-9_]*)}");
  private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]*");

  private final String name;
  private final Map<String, String> sections;

  private SqlTemplate(String name, Map<String, String> sections) {
    this.name = name;
    this.sections = sections;
  }

  /** The resource at {@code path}, relative to this package (e.g. {@code postgresql/fence.sql}). */
  static SqlTemplate load(String path) {
    try (InputStream in = SqlTemplate.class.getResourceAsStream(path)) {
      if (in == null) {
        throw new IllegalStateException("SQL template " + resourceName(path) + " is missing from the class path "
            + "(it ships in the fencing-fence-sql jar)");
      }
      return parse(resourceName(path), new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read SQL template " + resourceName(path) + ": " + e.getMessage(), e);
    }
  }

  private static String resourceName(String path) {
    return SqlTemplate.class.getPackageName().replace('.', '/') + "/" + path;
  }

  /** Parses template text; {@code name} names it in errors. */
  static SqlTemplate parse(String name, String text) {
    Map<String, String> sections = new LinkedHashMap<>();
    String current = null;
    List<String> body = new ArrayList<>();
    String[] lines = text.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i];
      Matcher start = SECTION.matcher(line);
      if (current == null) {
        if (start.matches()) {
          current = start.group(1);
          if (sections.containsKey(current)) {
            throw new IllegalStateException(name + ":" + (i + 1) + ": section '" + current + "' is defined twice");
          }
          body.clear();
        } else if (line.equals(END)) {
          throw new IllegalStateException(name + ":" + (i + 1) + ": " + END + " outside a section");
        } else if (!line.isBlank() && !line.startsWith("--")) {
          throw new IllegalStateException(name + ":" + (i + 1) + ": SQL outside a section (expected "
              + "'-- @section <name>' before it): " + line);
        }
      } else if (line.equals(END)) {
        sections.put(current, String.join("\n", body));
        current = null;
      } else if (start.matches() || line.startsWith("-- @")) {
        throw new IllegalStateException(name + ":" + (i + 1) + ": section '" + current + "' is not closed by "
            + END + " before: " + line);
      } else {
        body.add(line);
      }
    }
    if (current != null) {
      throw new IllegalStateException(name + ": section '" + current + "' is not closed by " + END);
    }
    return new SqlTemplate(name, sections);
  }

  /** The section names, in file order. */
  Set<String> sections() {
    return sections.keySet();
  }

  /** The section's text as written, parameters and all (tests check it against the Java constants). */
  String text(String section) {
    String text = sections.get(section);
    if (text == null) {
      throw new IllegalArgumentException("SQL template " + name + " has no section '" + section + "' (it has "
          + sections.keySet() + ")");
    }
    return text;
  }

  /** Renders {@code section} with parameters given as name, value pairs. */
  String render(String section, String... nameValuePairs) {
    if (nameValuePairs.length % 2 != 0) {
      throw new IllegalArgumentException("parameters of " + name + " section '" + section
          + "' must come in name, value pairs");
    }
    Map<String, String> params = new LinkedHashMap<>();
    for (int i = 0; i < nameValuePairs.length; i += 2) {
      if (params.put(nameValuePairs[i], nameValuePairs[i + 1]) != null) {
        throw new IllegalArgumentException("parameter ${" + nameValuePairs[i] + "} of " + name + " section '"
            + section + "' is passed twice");
      }
    }
    return render(section, params);
  }

  /** Renders {@code section} with {@code params} (name to SQL text). */
  String render(String section, Map<String, String> params) {
    String text = text(section);
    Set<String> used = new HashSet<>();
    StringBuilder out = new StringBuilder();
    boolean first = true;
    for (String line : text.split("\n", -1)) {
      Matcher block = BLOCK.matcher(line);
      if (block.matches()) {
        String value = value(section, params, block.group(2), used);
        if (value.isEmpty()) {
          continue;
        }
        for (String valueLine : value.split("\n", -1)) {
          out.append(first ? "" : "\n").append(valueLine.isEmpty() ? "" : block.group(1)).append(valueLine);
          first = false;
        }
      } else {
        out.append(first ? "" : "\n");
        first = false;
        int from = 0;
        for (int at = line.indexOf("${"); at >= 0; at = line.indexOf("${", from)) {
          int close = line.indexOf('}', at);
          String param = close < 0 ? "" : line.substring(at + 2, close);
          if (!NAME.matcher(param).matches()) {
            throw new IllegalStateException("SQL template " + name + " section '" + section + "': malformed "
                + "parameter at '" + line.substring(at) + "' (expected ${name}, name of a-z 0-9 _)");
          }
          out.append(line, from, at).append(value(section, params, param, used));
          from = close + 1;
        }
        out.append(line, from, line.length());
      }
    }
    if (!used.containsAll(params.keySet())) {
      Set<String> unused = new TreeSet<>(params.keySet());
      unused.removeAll(used);
      throw new IllegalArgumentException("SQL template " + name + " section '" + section + "' has no parameter "
          + unused + " (it uses " + new TreeSet<>(used) + ")");
    }
    return out.toString();
  }

  private String value(String section, Map<String, String> params, String param, Set<String> used) {
    String value = params.get(param);
    if (value == null) {
      throw new IllegalArgumentException("SQL template " + name + " section '" + section + "' needs parameter ${"
          + param + "}, which was not set");
    }
    used.add(param);
    return value;
  }
}
