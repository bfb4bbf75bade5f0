package dev.fencing.agent.instrumentation.quartz;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.agent.instrumentation.LibraryCheck;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.quartz.Job;
import org.quartz.JobExecutionContext;

/**
 * The job hook against the real jars of the oldest and the latest supported Quartz (2.3.0, 2.5.2), with an
 * application's job classes beside them: every class implementing {@code org.quartz.Job} that declares
 * {@code execute(JobExecutionContext)} gets the advice once, and it weaves; a subclass that inherits {@code execute}
 * is advised through its super class; of Quartz's own classes only its jobs are (2.5's {@code FileScanJob}).
 */
class QuartzRangeTest {
  @TempDir
  Path dir;

  /** An application's job. */
  public static class AppJob implements Job {
    @Override
    public void execute(JobExecutionContext context) {}
  }

  /** A job that inherits execute (as a subclass of Spring's QuartzJobBean does). */
  public static class InheritingJob extends AppJob {}

  /** A class with an execute of the same shape that is no job. */
  public static class NotAJob {
    public void execute(JobExecutionContext context) {}
  }

  @ParameterizedTest
  @ValueSource(strings = {"oldest", "latest"})
  void everyJobsExecuteIsAdvisedAndTheAdviceWeaves(String end) throws Exception {
    List<Path> jars = new ArrayList<>(LibraryCheck.versionJars("quartz", end));
    jars.add(appJar(AppJob.class, InheritingJob.class, NotAJob.class));
    Map<String, Integer> expected = end.equals("oldest") ? Map.of(AppJob.class.getName(), 1)
        : Map.of(AppJob.class.getName(), 1, "org.quartz.plugins.xml.FileScanJob", 1);
    assertThat(LibraryCheck.advised(new QuartzInstrumentationModule(true), jars)).isEqualTo(expected);
  }

  private Path appJar(Class<?>... classes) throws IOException {
    Path jar = dir.resolve("app.jar");
    try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out)) {
      for (Class<?> c : classes) {
        String file = c.getName().replace('.', '/') + ".class";
        j.putNextEntry(new JarEntry(file));
        try (InputStream in = c.getClassLoader().getResourceAsStream(file)) {
          in.transferTo(j);
        }
        j.closeEntry();
      }
    }
    return jar;
  }
}
