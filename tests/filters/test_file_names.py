"""A text naming its picture's file (filters/file_names.py)."""
import pytest

from filters.file_names import file_words, named_by_file, names_in_one_word, titled_by_file


def test_file_words_split_names_camel_case_and_drop_numbers_and_stop_words():
    assert file_words("Alexandria-Douziech_-RetracingNarratives.jpg") == \
        {"alexandria", "douziech", "retracing", "narratives"}
    assert file_words("Bourbon-Balls-4-150x150.jpg") == {"bourbon", "balls"}
    assert file_words("the-end.png") == {"end"}


@pytest.mark.parametrize("text,name", [
    ("Bourbon Balls", "Bourbon-Balls-4-150x150.jpg"),
    ("Enchilada Suizas", "chicken-enchiladas-suizas-verdes-4-150x150.jpg"),  # plural, extra words
    ("ANDREW LLOYD WEBBER", "andrew-lloyd-webber-hot1.jpg"),
    ("Alexandria Douziech RetracingNarratives", "Alexandria-Douziech_-RetracingNarratives.jpg"),
    ("Basil Chicken in Coconut Curry Sauce", "Basil-Chicken-in-Coconut-Curry-Sauce-Featured-1.jpg"),
])
def test_texts_naming_their_file(text, name):
    assert named_by_file(text, name)


@pytest.mark.parametrize("text,name", [
    ("Delicious", "delicious.gif"),  # one word: a brand's or a button's name
    ("Brit + Co", "britco.png"),  # "brit" is too short to match "britco" by its start
    ("michael muthee 8bPqxyodoUk unsplash", "michael-muthee-8bPqxyodoUk-unsplash-360x240.jpg"),
    ("Deviled Strawberries", "DSC00954-258x344.png"),
    ("Bourbon Balls recipe", "Bourbon-Balls-4-150x150.jpg"),  # "recipe" is not in the name
    ("", "a.jpg"), ("Bourbon Balls", ""),
])
def test_texts_not_naming_their_file(text, name):
    assert not named_by_file(text, name)


def test_a_cms_title_made_of_the_file_name_and_its_number():
    # seventh pass: "Reichsbürger 1" for Reichsbürger-1-706x386.jpg (size suffix, edit stamp
    # and percent-encoding taken off); a text of other words, or no number, is no such title
    assert titled_by_file("Reichsbürger 1", "Reichsb%C3%BCrger-1-706x386.jpg")
    assert titled_by_file("Half Life Alyx 1", "Half-Life-Alyx-1-300x200.jpg")
    assert titled_by_file("Filiale München 16", "Filiale-München-16-e1558349457528.jpg")
    assert not titled_by_file("Bourbon Balls", "Bourbon-Balls-150x150.jpg")
    assert not titled_by_file("Tour de France 2019", "tdf-2019.jpg")
    assert not titled_by_file("Half Life Alyx 2", "Half-Life-Alyx-1-300x200.jpg")
    assert not titled_by_file("Alyx 1", "")


def test_a_final_year_is_part_of_the_title_not_a_running_number():
    # twelfth pass: laweekly's "Whitewashed Botany, 2022" on a file named from the caption is
    # an artwork's title and year, no CMS's upload title; 1800-2099 are years, the rest counts
    assert not titled_by_file("Alexandria Douziech: Whitewashed Botany, 2022",
                              "Alexandria-Douziech_-Whitewashed-Botany-2022.jpg")
    assert not titled_by_file("Tour de France 2019", "Tour-de-France-2019-300x200.jpg")
    assert not titled_by_file("Bridge 1800", "Bridge-1800.jpg")
    assert not titled_by_file("Bridge 2099", "Bridge-2099.jpg")
    assert titled_by_file("Bridge 1799", "Bridge-1799.jpg")  # no year: a number as before
    assert titled_by_file("Bridge 2100", "Bridge-2100.jpg")
    assert titled_by_file("Botany 2022 3", "Botany-2022-3.jpg")  # a year, then its counter
    assert titled_by_file("Reichsbürger 20", "Reichsbürger-20.jpg")


def test_one_word_of_letters_that_is_a_word_of_the_file_names_it():
    # nineteenth pass: the text step adds the picture's size and the word's frequency
    assert names_in_one_word("Guacamole", "Guacamole-feature-500x500.jpg")
    assert names_in_one_word("pierogi", "pierogi-2-500x500.jpg")
    assert not names_in_one_word("Zuppa-Toscana", "zuppa-toscana-500x500.jpg")
    assert not names_in_one_word("Plate", "file-11.jpg")
    assert not names_in_one_word("DSC_0543", "dsc_0543-scaled.jpg")
