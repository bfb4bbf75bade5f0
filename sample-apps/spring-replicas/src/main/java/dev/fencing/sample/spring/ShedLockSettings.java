package dev.fencing.sample.spring;

import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Profile;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Profile "shedlock": ShedLock as its users set it up, with the JDBC provider on the app's database (table
 * {@code shedlock}, the database's clock) and the default method proxy of {@code @SchedulerLock}.
 */
@Configuration
@Profile("shedlock")
@EnableSchedulerLock(defaultLockAtMostFor = "PT30S")
public class ShedLockSettings {
  @Bean
  public LockProvider lockProvider(DataSource dataSource) {
    return new JdbcTemplateLockProvider(JdbcTemplateLockProvider.Configuration.builder()
        .withJdbcTemplate(new JdbcTemplate(dataSource))
        .usingDbTime()
        .build());
  }
}
