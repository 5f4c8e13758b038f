"""C{list}: the spiders C{run} finds: by name in a project, else the classes in
./spiders/ by dotted path, else the demo spiders the package ships."""

from tinyscrapy.commands import ScrapyCommand


class Command(ScrapyCommand):
    """Scrapy's C{list}, which also works outside a project."""

    requires_crawler_process = False
    default_settings = {"LOG_ENABLED": False}

    def short_desc(self):
        return "List the spiders `run` can find"

    def long_desc(self):
        return ("Inside a project (tinyscrapy.cfg), print the name of every spider of "
                "SPIDER_MODULES; elsewhere, the dotted path of every spider class in "
                "./spiders/, or, with no such folder, of the demo spiders the package ships. "
                "`run` takes either.")

    def run(self, args, opts):
        from tinyscrapy.commands.run import DEMO_SPIDERS
        from tinyscrapy.spiderloader import find_spiders, get_spider_loader, has_spiders_folder
        from tinyscrapy.utils.project import inside_project
        if inside_project():
            if self.settings["ADDONS"]:  # where the spiders are may be an add-on's to say
                from tinyscrapy.addons import AddonManager  # (the CrawlerProcess's step)
                AddonManager.load_pre_crawler_settings(self.settings)
            for name in sorted(get_spider_loader(self.settings).list()):
                print(name)
            return
        for path in find_spiders() if has_spiders_folder() else DEMO_SPIDERS:
            print(path)
