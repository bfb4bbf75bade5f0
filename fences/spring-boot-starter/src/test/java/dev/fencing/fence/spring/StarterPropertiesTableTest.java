package dev.fencing.fence.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The properties table is the same in the starter's README and docs/reference/fences.md, and names exactly the
 * properties {@link FencingProperties} binds: every key of the table binds (no unknown one), and every property has a
 * row.
 */
class StarterPropertiesTableTest {

  private static final Pattern KEY = Pattern.compile("^\\| `(fencing\\.fence\\.[^`]+)` \\|", Pattern.MULTILINE);

  @Test
  void readmeAndReferencePageHoldTheSameTableAndItNamesEveryPropertyThatBinds() throws IOException {
    String table = table(Path.of("README.md"));
    assertThat(table(Path.of("../../docs/reference/fences.md"))).as("docs/reference/fences.md's table")
        .isEqualTo(table);

    Set<String> keys = new TreeSet<>();
    Matcher m = KEY.matcher(table);
    while (m.find()) {
      keys.add(m.group(1));
    }
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, String> samples = Map.of("enabled", "true", "strict", "true", "permissive", "false", "store", "memory",
        "drain-timeout", "5s", "order", "7");
    for (String key : keys) {
      String k = key.endsWith(".*") ? key.substring(0, key.length() - 1) + "dead-letter.timeout.ms" : key;
      values.put(k, samples.getOrDefault(k.substring(k.lastIndexOf('.') + 1), "x"));
    }
    FencingProperties bound = new Binder(new MapConfigurationPropertySource(values))
        .bind(FencingProperties.PREFIX, Bindable.of(FencingProperties.class),
            new NoUnboundElementsBindHandler(BindHandler.DEFAULT))
        .get();
    assertThat(bound.getHttp().getOrder()).isEqualTo(7);
    assertThat(bound.getKafka().getProperties()).containsEntry("dead-letter.timeout.ms", "x");

    assertThat(keys).containsExactlyInAnyOrderElementsOf(properties(FencingProperties.class,
        FencingProperties.PREFIX));
  }

  /** Every property of {@code type} as a kebab-case key, nested classes' under their own prefix. */
  private static Set<String> properties(Class<?> type, String prefix) {
    Set<String> out = new TreeSet<>();
    for (Method getter : type.getMethods()) {
      String name = getter.getName();
      if (getter.getParameterCount() != 0 || getter.getDeclaringClass() != type
          || !(name.startsWith("get") || name.startsWith("is"))) {
        continue;
      }
      String key = prefix + "." + kebab(name.substring(name.startsWith("is") ? 2 : 3));
      if (getter.getReturnType().getDeclaringClass() == FencingProperties.class
          && !getter.getReturnType().isEnum()) {
        out.addAll(properties(getter.getReturnType(), key));
      } else {
        out.add(Map.class.isAssignableFrom(getter.getReturnType()) ? key + ".*" : key);
      }
    }
    return out;
  }

  private static String kebab(String camel) {
    return camel.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
  }

  private static String table(Path readme) throws IOException {
    String text = Files.readString(readme);
    int from = text.indexOf("<!-- properties-table -->");
    int to = text.indexOf("<!-- /properties-table -->");
    assertThat(from).as(readme + " has the properties table between its markers").isGreaterThanOrEqualTo(0);
    assertThat(to).isGreaterThan(from);
    return text.substring(from, to);
  }
}
