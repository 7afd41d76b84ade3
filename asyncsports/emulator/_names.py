"""Name pools for generated data. ASCII only, so that sorting by name has one answer."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CITIES", "COUNTRIES", "FIRST_NAMES", "LAST_NAMES", "NICKNAMES", "Country"]


class Country(NamedTuple):
    """A country: ISO 3166-1 alpha-2 and alpha-3 codes, name, continent, a rough position."""

    iso2: str
    iso3: str
    name: str
    continent: str
    lat: float
    lon: float


def _words(text: str) -> tuple[str, ...]:
    """The words of ``text``: a pool written as prose, as many to a line as fit."""
    return tuple(text.split())


COUNTRIES: tuple[Country, ...] = (
    Country("GB", "GBR", "United Kingdom", "Europe", 52.5, -1.5),
    Country("IE", "IRL", "Ireland", "Europe", 53.3, -7.7),
    Country("FR", "FRA", "France", "Europe", 46.6, 2.4),
    Country("DE", "DEU", "Germany", "Europe", 51.1, 10.4),
    Country("ES", "ESP", "Spain", "Europe", 40.2, -3.6),
    Country("IT", "ITA", "Italy", "Europe", 42.8, 12.6),
    Country("NL", "NLD", "Netherlands", "Europe", 52.2, 5.5),
    Country("BE", "BEL", "Belgium", "Europe", 50.6, 4.6),
    Country("PL", "POL", "Poland", "Europe", 52.1, 19.4),
    Country("SE", "SWE", "Sweden", "Europe", 62.0, 15.0),
    Country("NO", "NOR", "Norway", "Europe", 61.0, 9.0),
    Country("FI", "FIN", "Finland", "Europe", 64.0, 26.0),
    Country("CZ", "CZE", "Czechia", "Europe", 49.8, 15.5),
    Country("SK", "SVK", "Slovakia", "Europe", 48.7, 19.7),
    Country("RS", "SRB", "Serbia", "Europe", 44.0, 20.9),
    Country("GR", "GRC", "Greece", "Europe", 39.1, 22.0),
    Country("TR", "TUR", "Turkey", "Asia", 39.0, 35.2),
    Country("US", "USA", "United States", "North America", 39.8, -98.6),
    Country("CA", "CAN", "Canada", "North America", 56.1, -106.3),
    Country("MX", "MEX", "Mexico", "North America", 23.6, -102.6),
    Country("BR", "BRA", "Brazil", "South America", -14.2, -51.9),
    Country("AR", "ARG", "Argentina", "South America", -38.4, -63.6),
    Country("AU", "AUS", "Australia", "Oceania", -25.3, 133.8),
    Country("NZ", "NZL", "New Zealand", "Oceania", -40.9, 174.9),
    Country("ZA", "ZAF", "South Africa", "Africa", -30.6, 22.9),
    Country("NG", "NGA", "Nigeria", "Africa", 9.1, 8.7),
    Country("IN", "IND", "India", "Asia", 20.6, 79.0),
    Country("CN", "CHN", "China", "Asia", 35.9, 104.2),
    Country("JP", "JPN", "Japan", "Asia", 36.2, 138.3),
    Country("TH", "THA", "Thailand", "Asia", 15.9, 100.9),
    Country("PK", "PAK", "Pakistan", "Asia", 30.4, 69.3),
    Country("HK", "HKG", "Hong Kong", "Asia", 22.3, 114.2),
)

CITIES: tuple[str, ...] = _words(
    """
    Aberdeen Ashford Bayside Belmont Brighton Bristol Camden Cardiff Carlton Chester
    Clifton Coventry Dalton Denton Dover Dunmore Easton Elmwood Fairview Fulton Glenwood
    Grafton Hamilton Harbor Hartford Hastings Highland Kenton Kingston Lakeside
    Lancaster Lexington Lincoln Marlow Melrose Milford Newport Northfield Oakland Oxford
    Preston Queensbury Redwood Richmond Riverside Rockford Salem Sheldon Southport
    Springfield Stanton Stratford Sutton Thornbury Trenton Upton Valemont Warwick Wesley
    Westbrook Weston Whitby Winchester Windsor Woodstock Yarmouth York Zenith
    """
)

NICKNAMES: tuple[str, ...] = _words(
    """
    Admirals Badgers Bears Bulls Chargers Comets Cougars Crusaders Dragons Eagles
    Falcons Foxes Giants Hawks Hornets Huskies Jets Kings Knights Lions Lynx Mariners
    Miners Owls Panthers Pirates Raiders Rangers Ravens Rebels Rockets Rovers Royals
    Sharks Spartans Stallions Storm Tigers Titans Vikings Wanderers Warriors Wolves
    """
)

FIRST_NAMES: tuple[str, ...] = _words(
    """
    Aaron Adam Adrian Alan Alex Andre Andrew Anthony Ben Bruno Carl Carlos Chris Colin
    Daniel David Dean Diego Dominic Eric Felix Gary George Graham Hugo Ian Ivan Jack
    Jake James Jamie Joe John Jonas Jordan Jose Kevin Kyle Lars Leo Liam Lucas Luke
    Marco Mark Martin Matteo Max Michael Neil Nick Noah Oliver Omar Oscar Owen Paul
    Pedro Peter Rafael Ray Ricky Robert Ronnie Ryan Sam Scott Sean Simon Stephen Steve
    Thomas Tony Victor Will Xavier Yuri Zak
    """
)

LAST_NAMES: tuple[str, ...] = _words(
    """
    Allen Anderson Bailey Baker Barnes Bell Bennett Bingham Brooks Brown Campbell Carter
    Clarke Collins Cook Cooper Davies Davis Dixon Doherty Edwards Evans Fisher Foster
    Fraser Garcia Gibson Gray Green Hall Harris Hawkins Higgins Hill Hughes Hunter
    Jackson James Johnson Jones Kelly King Lee Lewis Lopez Marshall Martin Mason Miller
    Mitchell Moore Morgan Morris Murphy Murray Nelson Novak Parker Perry Phillips Price
    Reed Reynolds Roberts Robertson Robinson Rossi Russell Scott Selby Shaw Silva Smith
    Stevens Stewart Taylor Thompson Trump Turner Walker Ward Watson White Williams
    Wilson Wood Wright Young
    """
)
