package dev.fencing.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The docs stay honest: a short README, every relative link and anchor resolving, the module map of docs/DESIGN.md
 * naming every module, and no issue numbers outside the dated notes and the changelog (one home per fact, history in
 * CHANGELOG.md and git log; see CONTRIBUTING.md).
 */
class DocsTest {
  private static final Path ROOT = Path.of("../..").toAbsolutePath().normalize();
  private static final int README_MAX_LINES = 200;
  /** An issue reference: the word and a number (the pattern below spells it without matching itself). */
  private static final Pattern ISSUE = Pattern.compile("(?i)\\bissue\\s+#?\\d");
  private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
  private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
  private static final Set<String> CHECKED_EXTENSIONS = Set.of(".md", ".java", ".sh", ".xml", ".yml", ".yaml");

  @Test
  void readmeIsShort() throws IOException {
    List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
    assertThat(lines.size()).as("README.md lines (details belong under docs/, linked from it)")
        .isLessThanOrEqualTo(README_MAX_LINES);
  }

  @Test
  void noIssueNumbersOutsideNotesAndChangelog() {
    List<String> found = new ArrayList<>();
    for (String file : trackedFiles()) {
      if (file.startsWith("docs/notes/") || file.equals("CHANGELOG.md")
          || CHECKED_EXTENSIONS.stream().noneMatch(file::endsWith)) {
        continue;
      }
      List<String> lines = lines(ROOT.resolve(file));
      for (int i = 0; i < lines.size(); i++) {
        if (ISSUE.matcher(lines.get(i)).find()) {
          found.add(file + ":" + (i + 1) + ": " + lines.get(i).strip());
        }
      }
    }
    assertThat(found).as("issue numbers are history: say what is (history lives in CHANGELOG.md, git log and "
        + "docs/notes/)").isEmpty();
  }

  @Test
  void everyRelativeLinkInTheDocsResolves() {
    List<String> markdown = trackedFiles().stream().filter(f -> f.endsWith(".md")).toList();
    assertThat(markdown).as("Markdown files found").contains("README.md", "docs/README.md", "docs/DESIGN.md");
    List<String> broken = new ArrayList<>();
    Map<Path, Set<String>> anchorCache = new HashMap<>();
    for (String file : markdown) {
      Path source = ROOT.resolve(file);
      if (!Files.exists(source)) {
        continue; // deleted in the working tree, not yet in the index
      }
      Matcher m = LINK.matcher(proseOf(lines(source)));
      while (m.find()) {
        String target = m.group(1);
        if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
          continue; // http:, https:, mailto: ...
        }
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty() ? source : source.getParent().resolve(path).normalize();
        if (!Files.exists(resolved)) {
          broken.add(file + ": (" + target + "): no such file " + ROOT.relativize(resolved));
        } else if (anchor != null && resolved.toString().endsWith(".md")
            && !anchorCache.computeIfAbsent(resolved, DocsTest::anchors).contains(anchor)) {
          broken.add(file + ": (" + target + "): no heading with anchor #" + anchor + " in "
              + ROOT.relativize(resolved));
        }
      }
    }
    assertThat(broken).as("relative links and anchors (GitHub's heading anchors)").isEmpty();
  }

  @Test
  void designModuleMapNamesEveryModule() throws IOException {
    Set<String> modules = new LinkedHashSet<>();
    addModules("", modules);
    assertThat(modules).as("modules of the root pom.xml and its aggregators").contains("agent/core", "fences/sql",
        "instrumentation", "instrumentation/jdbc");

    List<String> map = moduleMapRows();
    assertThat(map).as("docs/DESIGN.md section 3's module table").isNotEmpty();
    Set<String> missing = new TreeSet<>();
    for (String module : modules) {
      if (map.stream().noneMatch(row -> names(row, module))) {
        missing.add(module);
      }
    }
    assertThat(missing).as("modules docs/DESIGN.md section 3 (the module map) does not name").isEmpty();
  }

  /** The modules of the pom in {@code dir} (relative to the root, "" for it) and of the aggregators among them. */
  private static void addModules(String dir, Set<String> modules) throws IOException {
    Path pom = ROOT.resolve(dir).resolve("pom.xml");
    Matcher m = MODULE.matcher(Files.readString(pom).replaceAll("(?s)<!--.*?-->", ""));
    while (m.find()) {
      String module = (dir.isEmpty() ? "" : dir + "/") + m.group(1).strip();
      modules.add(module);
      addModules(module, modules);
    }
  }

  /**
   * A row names a module by its path in backticks ({@code `instrumentation/jdbc`}), or, in a row whose first entry
   * is a sibling in the same directory ({@code `instrumentation/java-http-client`, `okhttp`}), by its last segment.
   */
  static boolean names(String row, String module) {
    if (row.contains("`" + module + "`")) {
      return true;
    }
    int slash = module.lastIndexOf('/');
    if (slash < 0) {
      return false;
    }
    String firstCell = row.split("\\|", 3).length > 1 ? row.split("\\|", 3)[1] : "";
    return firstCell.contains("`" + module.substring(0, slash + 1))
        && firstCell.contains("`" + module.substring(slash + 1) + "`");
  }

  /** The table rows of docs/DESIGN.md section 3 ("## 3. Module map ..."), up to the next section. */
  private static List<String> moduleMapRows() {
    List<String> rows = new ArrayList<>();
    boolean in = false;
    for (String line : lines(ROOT.resolve("docs/DESIGN.md"))) {
      if (line.startsWith("## ")) {
        in = line.startsWith("## 3. ");
      } else if (in && line.startsWith("|")) {
        rows.add(line);
      }
    }
    return rows;
  }

  /** GitHub's anchors of a Markdown file's headings: duplicates get -1, -2, ... */
  static Set<String> anchors(Path markdown) {
    Set<String> out = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean fence = false;
    for (String line : lines(markdown)) {
      if (line.startsWith("```")) {
        fence = !fence;
        continue;
      }
      Matcher h = HEADING.matcher(line);
      if (fence || !h.matches()) {
        continue;
      }
      String anchor = anchor(h.group(1));
      int n = seen.merge(anchor, 1, Integer::sum) - 1;
      out.add(n == 0 ? anchor : anchor + "-" + n);
    }
    return out;
  }

  /** GitHub's rule: lower case, punctuation dropped except '-' and '_', each space a '-'. */
  static String anchor(String heading) {
    String lower = heading.strip().toLowerCase(Locale.ROOT);
    StringBuilder out = new StringBuilder();
    lower.codePoints().forEach(c -> {
      if (c == ' ') {
        out.append('-');
      } else if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
        out.appendCodePoint(c);
      }
    });
    return out.toString();
  }

  /** The text outside fenced code blocks and inline code, where a link is a link. */
  private static String proseOf(List<String> lines) {
    StringBuilder out = new StringBuilder();
    boolean fence = false;
    for (String line : lines) {
      if (line.startsWith("```")) {
        fence = !fence;
        continue;
      }
      if (!fence) {
        out.append(line.replaceAll("`[^`]*`", "")).append('\n');
      }
    }
    return out.toString();
  }

  /** Files git tracks (the index, so new files count once added), else every file outside target/ and .git/. */
  private static List<String> trackedFiles() {
    try {
      Process p = new ProcessBuilder("git", "-C", ROOT.toString(), "ls-files", "-z").redirectErrorStream(false)
          .start();
      byte[] out = p.getInputStream().readAllBytes();
      if (p.waitFor() == 0 && out.length > 0) {
        return Stream.of(new String(out, StandardCharsets.UTF_8).split("\0")).filter(s -> !s.isEmpty()).toList();
      }
    } catch (IOException e) {
      // no git: walk the tree below
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (Stream<Path> walk = Files.walk(ROOT)) {
      return walk.filter(Files::isRegularFile)
          .map(f -> ROOT.relativize(f).toString().replace('\\', '/'))
          .filter(f -> !f.startsWith(".git/") && !f.contains("/target/") && !f.startsWith("target/")
              && !f.contains("/node_modules/"))
          .sorted().collect(Collectors.toList());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
