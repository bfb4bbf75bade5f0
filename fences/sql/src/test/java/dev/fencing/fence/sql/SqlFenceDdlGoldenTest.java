package dev.fencing.fence.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The DDL of every dialect and mode, statement by statement (kind, object, text), equals the reviewed golden files
 * under {@code src/test/resources/golden-ddl/}: a change to a SQL resource or to the Java that fills it in shows up
 * here as a diff to review. {@link DdlGolden#main} regenerates the files after a deliberate change.
 */
class SqlFenceDdlGoldenTest {

  @TestFactory
  Stream<DynamicTest> renderedDdlEqualsTheGoldenFiles() {
    return DdlGolden.render().entrySet().stream().map(e -> DynamicTest.dynamicTest(e.getKey(),
        () -> assertThat(e.getValue()).as(e.getKey()).isEqualTo(golden(e.getKey()))));
  }

  @Test
  void everyGoldenFileIsRendered() throws IOException, URISyntaxException {
    Path root = Path.of(getClass().getClassLoader().getResource(DdlGolden.ROOT).toURI());
    Map<String, String> rendered = DdlGolden.render();
    try (Stream<Path> files = Files.walk(root)) {
      assertThat(files.filter(Files::isRegularFile).map(p -> root.relativize(p).toString().replace('\\', '/')))
          .containsExactlyInAnyOrderElementsOf(rendered.keySet());
    }
    assertThat(rendered).hasSize(3 * (2 * 6 + 2 * 2 + 2 * 4 + 6));
  }

  private static String golden(String name) throws IOException {
    try (InputStream in = SqlFenceDdlGoldenTest.class.getClassLoader().getResourceAsStream(DdlGolden.ROOT + name)) {
      assertThat(in).as("golden file " + DdlGolden.ROOT + name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
